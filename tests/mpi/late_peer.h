// A peer that comes too late for MCRPMPI_NCCL_TIMEOUT: the device allreduce the timeout tests make
// (tests/mpi/test_stuck_peer.cpp, test_timeout_report.cpp) and what they require of its outcome on
// the ranks that waited and on the late one.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/memory_spaces.h"

namespace mcrp_test {

constexpr double kLatePeerMarginSeconds = 10;  // a loaded CI machine: generous, yet far from a hang

// MCRPMPI_NCCL_TIMEOUT in seconds, 0 when unset or not a number.
inline double nccl_timeout_seconds() {
  const char* timeout = std::getenv("MCRPMPI_NCCL_TIMEOUT");
  return timeout != nullptr ? std::atof(timeout) : 0;
}

// What one device allreduce gave: its code, whether the sum was right, and how long it took.
struct AllreduceOutcome {
  int rc = MPI_SUCCESS;
  bool right = false;
  double seconds = 0;
};

// An allreduce of 1024 floats of rank-dependent values in `space`; nonblocking: MPI_Iallreduce,
// then MPI_Wait.
inline AllreduceOutcome device_allreduce(MemorySpace& space, MPI_Comm comm, bool nonblocking = false) {
  constexpr std::size_t kCount = 1024;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  SpaceBuffer<float> send(space, std::vector<float>(kCount, static_cast<float>(rank + 1)));
  SpaceBuffer<float> recv(space, std::vector<float>(kCount, -1.0f));
  const auto start = std::chrono::steady_clock::now();
  AllreduceOutcome outcome;
  if (nonblocking) {
    MPI_Request request = MPI_REQUEST_NULL;
    outcome.rc = MPI_Iallreduce(send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm, &request);
    if (outcome.rc == MPI_SUCCESS) outcome.rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    outcome.rc = MPI_Allreduce(send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm);
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const float expected = static_cast<float>(size * (size + 1) / 2);
  outcome.right = true;
  for (float v : recv.download()) outcome.right = outcome.right && v == expected;
  return outcome;
}

// A rank that waited for the late one must get an error after the timeout, within the margin. The
// late rank must return within the timeout and margin, with a right result if it got one: its peers
// have left, yet what they sent before leaving may let it finish (the fake NCCL buffers it).
inline void check_late_peer_outcome(Checker& checker, const AllreduceOutcome& o, bool late, double timeout,
                                    const std::string& what) {
  if (!late) {
    checker.check(o.rc != MPI_SUCCESS, what + ": a peer that comes too late: an error");
    checker.check(
        o.seconds >= timeout * 0.9 && o.seconds <= timeout + kLatePeerMarginSeconds,
        what + ": the error comes after MCRPMPI_NCCL_TIMEOUT, within the margin: " + std::to_string(o.seconds) + " s");
  } else {
    checker.check(o.seconds <= timeout + kLatePeerMarginSeconds,
                  what + ": the late rank returns within the timeout and margin: " + std::to_string(o.seconds) + " s");
    checker.check(o.rc != MPI_SUCCESS || o.right, what + ": the late rank's result, if any, is right");
  }
}

}  // namespace mcrp_test
