#include "collectives/lifecycle.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdlib>

#include "collectives/config.h"
#include "collectives/half_reduction.h"
#include "collectives/nccl_comm.h"
#include "collectives/progress.h"
#include "collectives/stats.h"
#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/gpu_affinity.h"
#include "tuning/decision.h"

namespace mcrp {
namespace {

int local_rank() {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Comm_rank(node, &rank);
    PMPI_Comm_free(&node);
  }
  return rank;
}

}  // namespace

void on_initialized() {
  tuning::initialize(MPI_COMM_WORLD);  // env overrides + the tuning file, identical on every rank
  const char* select = std::getenv("MCRPMPI_SELECT_DEVICE");
  if (select != nullptr && select[0] == '1' && device::cuda_available()) {
    const int device = device::nearest_gpu(local_rank());
    if (device >= 0) cudaSetDevice(device);
  }
}

void before_finalize() {
  stats::report(MPI_COMM_WORLD);
  release_world_nccl_comm();
  release_progress_comm();
  release_half_reduction();
  if (device::cuda_available()) device::release_cached_buffers();
}

}  // namespace mcrp
