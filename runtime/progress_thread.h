// A helper thread that advances the library's background work (the device-only point-to-point
// protocol, p2p/engine.h) while no thread of the program does. A rank blocked inside the base MPI (a
// blocking collective on host buffers, a call the library does not wrap) or computing outside MPI
// cannot answer a peer waiting for its clear-to-send or its proposal, and MPI's progress rule says
// that peer's call must still complete: without the helper, Isend + MPI_Barrier + Wait against Recv
// + MPI_Barrier hung (docs/point-to-point.md, "Device-only communicators").
//
// The helper calls MPI, so it runs only where the base MPI runs at MPI_THREAD_MULTIPLE: by default
// where the program asked for that level (mpi4py, Horovod and PyTorch do). MCRPMPI_PROGRESS_THREAD=1
// has MPI_Init and MPI_Init_thread ask the base MPI for it in any process with CUDA, and tell the
// program the level it asked for (MPI_Query_thread too), as a plain MPI would; not the default, since
// MPICH 4.0.2 at MPI_THREAD_MULTIPLE adds about 90 instructions (its locks) to every host call
// (cost.host_calls). MCRPMPI_PROGRESS_THREAD=0: no helper.
//
// Since 2026-11-29 it also advances the library's requests in flight (runtime/requests.h): a rank
// blocked inside the base MPI does not take the next step of its own nonblocking device operations
// (an NCCL communicator's setup, a launch queued behind it), which a peer may wait on while the
// base MPI call needs that peer (test_coll_random found such a hang).
//
// It costs nothing while no communicator is asserted and no library request was made (it starts
// with the first protocol engine or the first request), and
// little while the program drives the library itself: it advances only when background work is
// pending and no thread has advanced the library since its last look, and looks every 50 us while
// its advances move work, every 1 ms while they move nothing, and every 10 ms while nothing is owed
// or the program advances the library itself.
#pragma once

#include <atomic>

namespace mcrp {

// The base MPI's initialisation, for MPI_Init (`required` null) and MPI_Init_thread: as the program
// asked, unless MCRPMPI_PROGRESS_THREAD=1 raises the level; then `provided` says the level the
// program asked for (or less, where the base MPI gives less) and MPI_Query_thread says the same.
int init_base_mpi(int* argc, char*** argv, const int* required, int* provided);
// MPI_Query_thread's answer: the level the program was told where init_base_mpi raised it, else
// the base MPI's own.
int query_thread_level(int* provided);

// Starts the helper, once, if the base MPI runs at MPI_THREAD_MULTIPLE and MCRPMPI_PROGRESS_THREAD
// allows it. Called when background work is first registered and at the first library request.
void start_progress_thread();
// Stops it and waits for it to end (MPI_Finalize, before the engines stop). It may start again.
void stop_progress_thread();
// True while the helper runs (tests).
bool progress_thread_running();

namespace progress_thread_detail {
struct alignas(64) AdvanceCount {  // a cache line of its own: every poll of every wait writes it
  std::atomic<unsigned> value{0};
};
inline AdvanceCount g_advances;
}
// Counts an advance of the library by any thread. A plain increment of an atomic (no read-modify-write
// instruction): concurrent calls may count as one, which is enough to tell the helper that someone did.
inline void note_advance() {
  auto& count = progress_thread_detail::g_advances.value;
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
inline unsigned advances_so_far() { return progress_thread_detail::g_advances.value.load(std::memory_order_relaxed); }

}  // namespace mcrp
