// Test-only: makes MPICH's busy-polling ranks give up the CPU when they have nothing to do, for
// test runs with more ranks (and helper threads) than cores.
//
// MPICH 4.0.2 (ch4:ucx, Debian) polls its progress engine without ever yielding, and its
// MPIR_CVAR_POLLS_BEFORE_YIELD is not read by ch4. With three ranks on the CI machine's two cores,
// a rank that waits for a peer spins until the kernel preempts it, so every message between ranks
// that do not hold a core at once costs a scheduler time slice: test_collectives_host_linked took
// 9.4 s on 3 ranks against 0.7 s on 2. Every progress poll calls ucp_worker_progress (the UCX
// netmod's), so this library, preloaded into the ranks, wraps it: after 16 polls in a row that
// found nothing, the thread calls sched_yield, which lets a runnable peer have the core (the same
// run: 1.09 s). A thread alone on its core gets it straight back. It changes when ranks run, never
// what MPI does; it is loaded only by the test helper mcrpmpi_add_mpi_test (tests/CMakeLists.txt,
// MCRPMPI_TEST_YIELD), never by the library or the benchmarks.
#include <dlfcn.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>

namespace {

using Progress = unsigned (*)(void*);

// UCX's own function. RTLD_NEXT finds it where libucp is in the global scope (a program linked with
// MPI); where MPI came with a module opened RTLD_LOCAL (mpi4py in Python), only its handle does,
// while MPICH's calls still reach this definition first. Without the real function a poll would
// make no progress and the run would hang: abort instead.
Progress find_real_progress() {
  if (void* next = dlsym(RTLD_NEXT, "ucp_worker_progress")) return reinterpret_cast<Progress>(next);
  if (void* ucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD)) {
    if (void* own = dlsym(ucp, "ucp_worker_progress")) return reinterpret_cast<Progress>(own);
  }
  std::fprintf(stderr, "mcrpmpi_test_yield: ucp_worker_progress of UCX not found\n");
  std::abort();
}

Progress real_progress() {
  static const Progress real = find_real_progress();
  return real;
}

constexpr unsigned kIdlePollsBeforeYield = 16;
thread_local unsigned t_idle_polls = 0;

}  // namespace

extern "C" __attribute__((visibility("default"))) unsigned ucp_worker_progress(void* worker) {
  const unsigned events = real_progress()(worker);
  if (events != 0) {
    t_idle_polls = 0;
  } else if (++t_idle_polls >= kIdlePollsBeforeYield) {
    t_idle_polls = 0;
    sched_yield();
  }
  return events;
}
