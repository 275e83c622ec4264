#include "device/wait.h"

#include "device/cuda_runtime.h"
#include "device/handles.h"

namespace mcrp::device {

Status wait_event(cudaEvent_t event, ProgressHook& hook) {
  for (;;) {
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return {};
    if (state != cudaErrorNotReady) return cuda_status(state, "cudaEventQuery");
    MCRP_TRY(hook.poll());
  }
}

Status wait_stream(cudaStream_t stream, ProgressHook& hook) {
  Event done;
  MCRP_TRY(create_event(done));
  MCRP_TRY(cuda_status(cudaEventRecord(done.get(), stream), "cudaEventRecord"));
  return wait_event(done.get(), hook);
}

}  // namespace mcrp::device
