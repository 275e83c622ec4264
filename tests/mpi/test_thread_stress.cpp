// Threads under stress (issue 13): MPI_THREAD_MULTIPLE, N threads (8) each on its own duplicate of
// WORLD running the mixed calls of tests/mpi/mixed_calls.h -- blocking, nonblocking and persistent
// collectives, point-to-point and communicator create/free, device (or fake device) and host buffers
// -- for a number of rounds, every result checked. A deadlock fails by the ctest timeout.
//   test_thread_stress --space host|fake-device|device [--threads 8] [--rounds 64]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/mixed_calls.h"

namespace {

using namespace mcrp_test;

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int thread_count = std::atoi(option(argc, argv, "--threads", "8").c_str());
  const int rounds = std::atoi(option(argc, argv, "--rounds", "64").c_str());
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(option(argc, argv, "--space", "host"), MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (space && provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIPPED: the base MPI does not provide MPI_THREAD_MULTIPLE\n");
    } else if (space) {
      Checker checker;
      std::vector<MPI_Comm> comms(static_cast<std::size_t>(thread_count));
      for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      std::vector<Checker> checkers(comms.size());
      std::vector<long> calls(comms.size(), 0);
      std::vector<std::thread> threads;
      for (std::size_t t = 0; t < comms.size(); ++t) {
        threads.emplace_back([&, t] {
          MixedCalls mix(checkers[t], *space, comms[t], 1 << 16);
          for (int round = 0; round < rounds; ++round) calls[t] += mix.run_round(round);
        });
      }
      for (std::thread& thread : threads) thread.join();
      long total = 0;
      for (std::size_t t = 0; t < comms.size(); ++t) {
        const int rc = checkers[t].finish(comms[t], ("thread " + std::to_string(t)).c_str());
        checker.check(rc == 0, "thread " + std::to_string(t) + " on its own communicator");
        total += calls[t];
        MPI_Comm_free(&comms[t]);
      }
      if (rank == 0) std::printf("%d threads, %ld calls per rank\n", thread_count, total);
      exit_code = checker.finish(MPI_COMM_WORLD, "thread_stress");
    }
  }
  MPI_Finalize();
  return exit_code;
}
