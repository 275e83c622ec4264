// Frees that may wait for the device (cudaFree and cudaFreeHost synchronize it) run on a thread of
// their own: the device may be running an NCCL kernel that waits for a peer, and that peer may wait
// for this rank's MPI progress, which the calling thread must keep driving.
#pragma once
#include <functional>

namespace mcrp::device {

// Queues `release` for the background thread (started on first use) and returns at once.
void free_later(std::function<void()> release);

// Waits until everything queued so far has run.
void wait_for_frees();

}  // namespace mcrp::device
