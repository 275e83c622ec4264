// The raw-NCCL reference's one communicator and stream over MPI_COMM_WORLD's ranks, shared by its
// collectives and its point-to-point benchmarks; errors abort the job with NCCL's or CUDA's words.
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

namespace osu::nccl {

// The library's direct blocking path, step by step, added to raw NCCL (OSU_NCCL_STEPS): what each
// CUDA and MPI call of runtime/collectives' run_direct costs on the machine, without the library.
enum Step : unsigned {
  kStepDevice = 1,    // cudaGetDevice three times a call (the library's device guards and event pool)
  kStepOrder = 2,     // cudaStreamQuery(cudaStreamLegacy) before the launch; record + wait when busy
  kStepEvent = 4,     // completion by an event recorded after the launch and polled, not a stream sync
  kStepProgress = 8,  // an MPI_Iprobe on a private communicator between polls (implies kStepEvent)
};

struct Session {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int ranks = 1;
  bool nonblocking = false;
  unsigned steps = 0;                   // Step bits
  cudaEvent_t done = nullptr;           // kStepEvent's completion event
  cudaEvent_t legacy_done = nullptr;    // kStepOrder's event when the legacy stream is busy
  MPI_Comm progress_comm = MPI_COMM_NULL;
};

// The session (valid between setup and teardown).
Session& session();

// Reads OSU_NCCL_STEPS into the session's steps; false (with a message) for a name it does not know.
bool read_steps();

// Makes the communicator over `comm` (collective) and a non-blocking stream; gives each rank its own
// NCCL_HOSTID first when a node has more ranks than GPUs. OSU_NCCL_NONBLOCKING_COMM=1 makes it a
// nonblocking NCCL communicator (config.blocking = 0), as libmcrpmpi's are, to measure what that
// mode costs raw NCCL (osu-compare's way nccl-nb). OSU_NCCL_STEPS=device,order,event,progress (or
// all) adds those steps of the library's direct blocking path (osu-compare's way nccl-steps).
void setup(MPI_Comm comm);
void teardown();

void check(ncclResult_t result, const char* what);
void check(cudaError_t result, const char* what);

// The stream to launch the next call on, after the session's kStepDevice and kStepOrder steps.
cudaStream_t launch_stream();

// Checks the launch, then waits for the stream: the time of a call is launch to completion. On a
// nonblocking communicator it first polls until NCCL has launched the work (ncclInProgress over).
// With kStepEvent it records an event and polls it instead (with kStepProgress, probing MPI between).
void finish(ncclResult_t launched, const char* what);

}  // namespace osu::nccl
