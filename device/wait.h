// Waiting for device work without starving MPI. A bare cudaStreamSynchronize can deadlock when a
// peer sits in a base-MPI call that needs this rank to progress; so waits poll the event and run a
// progress hook between polls. The hook may also fail the wait (an NCCL async error, a timeout).
#pragma once
#include <cuda_runtime_api.h>

#include "device/status.h"

namespace mcrp::device {

class ProgressHook {
 public:
  virtual ~ProgressHook() = default;
  // Called between polls; a failed Status ends the wait with that Status.
  virtual Status poll() = 0;
};

// Returns once `event` has completed (or the hook fails, or the event reports a CUDA error).
Status wait_event(cudaEvent_t event, ProgressHook& hook);

// Records an event on `stream` and waits for it as above.
Status wait_stream(cudaStream_t stream, ProgressHook& hook);

}  // namespace mcrp::device
