#include "device/wait.h"

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "runtime/profile.h"

namespace mcrp::device {

Status wait_event(cudaEvent_t event, ProgressHook& hook) {
  profile::StepTimer waiting(profile::Step::wait);
  for (;;) {
    bool done = false;
    Status status = query_event(event, &done);
    if (status.ok() && done) return {};
    if (status.ok()) status = hook.poll();
    if (!status.ok()) {
      note_abandoned_work();  // the work before the event may still use the caller's blocks
      return status;
    }
  }
}

Status wait_stream(cudaStream_t stream, ProgressHook& hook) {
  Event done;
  MCRP_TRY(record_event(stream, done));
  return wait_event(done.get(), hook);
}

}  // namespace mcrp::device
