// Frees that may wait for the device (cudaFree and cudaFreeHost synchronize it) run on a thread of
// their own: the device may be running an NCCL kernel that waits for a peer, and that peer may wait
// for this rank's MPI progress, which the calling thread must keep driving.
//
// A thread of its own is not enough. While such a free waits for the device it holds the CUDA
// context's lock, so every other thread of the process stops at its next CUDA call -- an NCCL launch,
// a staging copy -- and if the peer needs that launch or that copy before it can join the kernel the
// free waits for, both ranks hang (as ncclCommDestroy did on the H100: runtime/nccl_teardown.h). So
// the thread runs its frees only through a gate that the runtime, which knows NCCL, installs once
// NCCL is loaded: at a moment no NCCL work is in flight, with NCCL launches kept out meanwhile. Until
// then (and in a process without NCCL) the gate is always open.
#pragma once
#include <functional>

#include "device/status.h"
#include "device/wait.h"

namespace mcrp::device {

// Runs `work` and answers true if the device may be synchronized now; else answers false at once
// without running it (the thread tries again a little later).
using QuietGate = bool (*)(const std::function<void()>& work);
void set_quiet_gate(QuietGate gate);

// Runs `work` on this thread if the gate is open now; false (and nothing run) if it is shut.
bool run_if_quiet(const std::function<void()>& work);

// Queues `release` for the background thread (started on first use) and returns at once.
void free_later(std::function<void()> release);

// Waits until everything queued so far has run.
void wait_for_frees();

// The same, driving `progress` meanwhile; ends early with the hook's failure (its deadline).
Status wait_for_frees(ProgressHook& progress);

}  // namespace mcrp::device
