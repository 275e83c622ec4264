// What a GPU does that makes NCCL communicator teardown (and any cudaFree) dangerous, played on the
// host. Freeing an NCCL communicator's resources (ncclCommDestroy: cudaFreeHost and friends), like
// the library's own cudaFree and cudaFreeHost of staging blocks, synchronizes the whole
// device while holding the CUDA context's lock: it waits for every kernel in flight -- the NCCL
// kernels of the process's other communicators included, which may be waiting for a peer -- and
// meanwhile no other thread of the process can launch anything. On the H100 that deadlocked two
// ranks whose threads each destroyed a communicator while another thread's NCCL kernel waited for the
// peer's matching launch, itself stuck behind the peer's own destroy.
//
// Here: every launch holds the launch gate shared; a device synchronization (ncclCommDestroy's, and
// the library's frees and pinned allocations) holds it exclusively and waits until every communicator of the process has
// no work in flight (failed and stopped ones count as idle: their work is not coming).
// ncclCommAbort does not wait (the library aborts only what it has stopped first).
#pragma once
#include <shared_mutex>

namespace fake_nccl {

class Comm;

namespace device_model {

void add(Comm* comm);
void remove(Comm* comm);

// Held by a launch from its first submission to its last.
class Launch {
 public:
  Launch();
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
};

// The device synchronization of ncclCommDestroy (and of the library's own frees and pinned
// allocations on the fake device, mcrpmpi_fake_nccl_wait_for_kernels): returns when no communicator
// has work in flight, having kept every launch out meanwhile.
void synchronize_device();

}  // namespace device_model
}  // namespace fake_nccl
