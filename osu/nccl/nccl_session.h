// The raw-NCCL reference's one communicator and stream over MPI_COMM_WORLD's ranks, shared by its
// collectives and its point-to-point benchmarks; errors abort the job with NCCL's or CUDA's words.
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

namespace osu::nccl {

struct Session {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int ranks = 1;
  bool nonblocking = false;
};

// The session (valid between setup and teardown).
Session& session();

// Makes the communicator over `comm` (collective) and a non-blocking stream; gives each rank its own
// NCCL_HOSTID first when a node has more ranks than GPUs. OSU_NCCL_NONBLOCKING_COMM=1 makes it a
// nonblocking NCCL communicator (config.blocking = 0), as libmcrpmpi's are, to measure what that
// mode costs raw NCCL (osu-compare's way nccl-nb).
void setup(MPI_Comm comm);
void teardown();

void check(ncclResult_t result, const char* what);
void check(cudaError_t result, const char* what);

// Checks the launch, then waits for the stream: the time of a call is launch to completion. On a
// nonblocking communicator it first polls until NCCL has launched the work (ncclInProgress over).
void finish(ncclResult_t launched, const char* what);

}  // namespace osu::nccl
