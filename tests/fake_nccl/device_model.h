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
// the library's frees and pinned allocations, and a test program's free of fake device memory)
// holds it exclusively and waits until every communicator of the process has
// no work in flight (failed and stopped ones count as idle: their work is not coming).
// ncclCommAbort does not wait (the library aborts only what it has stopped first).
//
// And a copy to or from pageable host memory: CUDA may make it synchronous, waiting for the work
// issued before it on its stream. On an NCCL communicator's stream that is NCCL work, which may wait
// for a peer. wait_for_stream plays it: the fake device calls it (set_fake_stream_wait) for a copy
// with an end in one of the staging pool's pageable stand-ins (device/buffer_pool.h).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
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

// What any other CUDA call holds while it runs (the context's lock, shared): the library's fake
// event records. Waits while a device synchronization holds it.
void enter_context();
void leave_context();

// The device synchronization of ncclCommDestroy (and of the library's own frees and pinned
// allocations on the fake device, mcrpmpi_fake_nccl_wait_for_kernels): returns when no communicator
// has work in flight, having kept every launch out meanwhile.
void synchronize_device();

// The synchronization the CUDA guide allows a page-locked allocation (NCCL's setup makes one before it
// returns, even on a nonblocking communicator): returns when the work every communicator of the
// process had submitted at the call has ended, without keeping launches out meanwhile.
void wait_for_earlier_work();

// Launches name their stream: work submitted on `stream` is `comm`'s.
void note_stream(cudaStream_t stream, Comm* comm);
// Returns once the work submitted so far on `stream` is done (or never will be); at once for a
// stream no launch has named.
void wait_for_stream(cudaStream_t stream);
// An event on `stream` (late kernels, fake_comm.h): the mark of the work submitted on it so far,
// and whether the work up to a mark is done (or never will be; or its communicator is gone).
std::uint64_t stream_mark(cudaStream_t stream);
bool stream_reached(cudaStream_t stream, std::uint64_t mark);
// A copy on `stream`: queued behind the work launched on it, if that is not done (true), for the
// communicator's worker to run in order; false when there is nothing to wait for.
bool run_after(cudaStream_t stream, void (*run)(void*), void* arg);

}  // namespace device_model
}  // namespace fake_nccl
