#include "runtime/lifecycle.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/gpu_affinity.h"
#include "runtime/base_mpi.h"
#include "runtime/config.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_comm.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/self_comm.h"
#include "runtime/state_report.h"
#include "tuning/decision.h"
#include "tuning/world_map.h"

namespace mcrp {

namespace {

std::once_flag g_base_mpi_named;

void name_base_mpi() {
  std::call_once(g_base_mpi_named, [] { std::fprintf(stderr, "%s\n", base_mpi_report().c_str()); });
}

}  // namespace

void on_initialized() {
  world_model_opened();
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  remember_world_rank(rank);
  if (config().show_base_mpi && rank == 0) name_base_mpi();
  tuning::initialize(MPI_COMM_WORLD);  // env overrides + the tuning file, identical on every rank
  // Whether this process has CUDA and can use NCCL is part of the WORLD map, so that choosing NCCL
  // for a communicator is agreed without a collective at its first device call, and every member
  // knows alike whether to take part in a device-only assertion (p2p/assertion.h).
  const int local_rank =
      tuning::learn_world_map(device::cuda_available(), device::cuda_available() && nccl_api() != nullptr);
  const char* select = std::getenv("MCRPMPI_SELECT_DEVICE");
  if (select != nullptr && select[0] == '1' && device::cuda_available()) {
    const int device = device::nearest_gpu(local_rank);
    if (device >= 0) cudaSetDevice(device);
  }
}

void on_session_initialized() {
  // A Sessions-only program never calls MPI_Init, and has no rank before it makes a communicator:
  // each process names the base MPI, once (the world model's rank 0 did, if it came first).
  if (config().show_base_mpi) name_base_mpi();
}

void before_finalize() {
  profile::report(MPI_COMM_WORLD);
  release_world_nccl_comm();
  release_world_self_comm();
  if (device::cuda_available()) {
    // At a moment no NCCL work is in flight (the frees synchronize the device); work that never ends
    // leaves the blocks to the process's exit at MCRPMPI_NCCL_TIMEOUT rather than hang here.
    MpiProgress progress("MPI_Finalize's release of staging blocks");
    if (!device::release_cached_buffers(progress).ok() && config().debug) {
      std::fprintf(stderr, "mcrpmpi: staging blocks left to the exit: NCCL work still in flight at MPI_Finalize\n");
    }
  }
}

}  // namespace mcrp
