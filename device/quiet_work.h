// CUDA calls that may wait for the whole device -- cudaFree and cudaFreeHost do (seen on the H100),
// cudaMallocHost may (reported by Caffe2's developers, NVIDIA/nccl#70; tests/gpu/
// probe_device_barriers.cpp tells for a given machine) -- run only at a moment the device is quiet.
// The device may be running an NCCL kernel that waits for a peer, and that peer may wait for this
// rank's next step. While such a call waits it holds the CUDA context's lock, so every thread of the
// process stops at its next CUDA call -- an NCCL launch, a staging copy -- and if the peer needs that
// launch or that copy before it can join the kernel the call waits for, both ranks hang (as
// ncclCommDestroy did on the H100: runtime/nccl_teardown.h). A thread of its own is not enough.
//
// So such work runs only through a gate that the runtime, which knows NCCL, installs once NCCL is
// loaded: at a moment no NCCL work is in flight, with NCCL launches kept out meanwhile. Until then
// (and in a process without NCCL) the gate is always open. Work that can wait (frees, trims, warming
// the staging pool) is deferred to a background thread that tries the gate until it opens; work
// that cannot (an allocation a call needs now) asks the gate once and has a fallback when it is shut
// (device/buffer_pool.h).
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

// Queues `work` for the background thread (started on first use), which runs it once the gate opens,
// and returns at once.
void defer_until_quiet(std::function<void()> work);

// Waits until everything queued so far has run.
void wait_for_deferred();

// The same, driving `progress` meanwhile; ends early with the hook's failure (its deadline).
Status wait_for_deferred(ProgressHook& progress);

}  // namespace mcrp::device
