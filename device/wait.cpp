#include "device/wait.h"

#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "runtime/profile.h"

namespace mcrp::device {

Status wait_event(cudaEvent_t event, ProgressHook& hook) {
  profile::StepTimer waiting(profile::Step::wait);
  for (;;) {
    bool done = false;
    MCRP_TRY(query_event(event, &done));
    if (done) return {};
    MCRP_TRY(hook.poll());
  }
}

Status wait_stream(cudaStream_t stream, ProgressHook& hook) {
  Event done;
  MCRP_TRY(record_event(stream, done));
  return wait_event(done.get(), hook);
}

}  // namespace mcrp::device
