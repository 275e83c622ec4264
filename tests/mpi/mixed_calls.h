// A fixed mix of calls for long runs (issue 13): blocking, nonblocking and persistent collectives,
// point-to-point, MPI_Alltoallw with MPI_Pack/MPI_Unpack (the block collectives' and local calls'
// staging) and communicator create/free, on device (or fake device) and host buffers, every result
// checked. Counts and roots depend only on the round number, so every rank makes the same
// calls. Used by the memory test (many rounds on one communicator) and the thread stress test (one
// mix per thread, each on its own communicator).
#pragma once
#include <mpi.h>

#include <atomic>

#include "tests/mpi/check.h"
#include "tests/mpi/memory_space.h"

namespace mcrp_test {

class MixedCalls {
 public:
  // `large` is the element count of the occasional large allreduce (pool buckets, staging chunks).
  MixedCalls(Checker& checker, MemorySpace& device, MPI_Comm comm, int large);
  ~MixedCalls();
  MixedCalls(const MixedCalls&) = delete;
  MixedCalls& operator=(const MixedCalls&) = delete;

  // One round; returns the number of MPI calls it made.
  int run_round(int round);

  // Where to record the part of the round running now ("allreduce_pair", ...; null between rounds),
  // for a watchdog on another thread that reports where a stuck thread is. Owned by the caller, so it
  // outlives this object.
  void record_steps_in(std::atomic<const char*>* step) { step_ = step; }

 private:
  int allreduce_pair(int round);
  int nonblocking_pair(int round);
  int persistent_round(int round);
  int bcast_round(int round);
  int ring_round(int round);
  int large_round(int round);
  int alltoallw_round(int round);
  int dup_round(int round);
  int step(const char* name, int (MixedCalls::*part)(int), int round);

  Checker& checker_;
  MemorySpace& device_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, large_;
  int* device_send_;
  int* device_recv_;
  MPI_Request persistent_ = MPI_REQUEST_NULL;
  int* persistent_send_;
  int* persistent_recv_;
  std::atomic<const char*>* step_ = nullptr;
};

}  // namespace mcrp_test
