// Barrier: it returns MPI_SUCCESS and really waits for the slowest rank.
#include <chrono>
#include <thread>

#include "tests/mpi/suite.h"

namespace mcrp_test {

void run_barrier(const Env& env) {
  using Clock = std::chrono::steady_clock;
  // A lower bound well under the delay: a loaded machine makes the wait longer, never shorter.
  constexpr auto kDelay = std::chrono::milliseconds(200);
  constexpr auto kMinimumWait = std::chrono::milliseconds(100);
  const TestComm& tc = env.comm;
  const std::string what = "barrier comm=" + tc.name + "(" + std::to_string(tc.rank) + "/" +
                           std::to_string(tc.size) + ")";
  env.checker.check(MPI_Barrier(tc.comm) == MPI_SUCCESS, what + ": returns MPI_SUCCESS");
  if (tc.size == 1) return;
  const int late = tc.size - 1;
  const auto start = Clock::now();
  if (tc.rank == late) std::this_thread::sleep_for(kDelay);
  const int rc = MPI_Barrier(tc.comm);
  const auto waited = Clock::now() - start;
  env.checker.check(rc == MPI_SUCCESS && waited >= kMinimumWait,
                    what + ": waits for the late rank (waited " +
                        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()) +
                        " ms, rc " + std::to_string(rc) + ")");
}

}  // namespace mcrp_test
