// What the random-traffic programs (test_p2p_random, test_coll_random) share: how they start MPI
// for their threads, which rounds and seed they run, and each thread's own MPI_COMM_WORLD.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"

namespace mcrp_test {

// MPI_Init, or MPI_Init_thread at MPI_THREAD_MULTIPLE where the program runs several threads
// (--threads T); errors return on MPI_COMM_WORLD. Returns the level the base MPI provides.
inline int init_for_threads(int* argc, char*** argv, int threads) {
  int provided = MPI_THREAD_SINGLE;
  if (threads > 1) MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  else MPI_Init(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return provided;
}

// --rounds N (`rounds` by default) or --round R (that one only, to replay a failure), --seed N.
struct RoundRange {
  int first;
  int end;
  std::uint64_t seed;
};
inline RoundRange round_range(int argc, char** argv, const char* rounds, const char* seed) {
  const int count = std::atoi(option(argc, argv, "--rounds", rounds).c_str());
  const int only = std::atoi(option(argc, argv, "--round", "-1").c_str());
  return {only >= 0 ? only : 0, only >= 0 ? only + 1 : count,
          std::strtoull(option(argc, argv, "--seed", seed).c_str(), nullptr, 10)};
}

// A thread's own MPI_COMM_WORLD: a duplicate, made on the main thread (creation is collective).
inline MPI_Comm duplicate_of_world() {
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &copy);
  return copy;
}

// Runs run(t) for every thread t, one checker each (t 0 on the calling thread, the others on threads
// of their own, all at once), then adds every thread's checks to checkers[0].
template <class Run>
void run_threads(std::vector<Checker>& checkers, Run run) {
  std::vector<std::thread> others;
  for (std::size_t t = 1; t < checkers.size(); ++t) others.emplace_back(run, static_cast<int>(t));
  run(0);
  for (std::thread& other : others) other.join();
  for (std::size_t t = 1; t < checkers.size(); ++t) checkers[0].absorb(checkers[t]);
}

}  // namespace mcrp_test
