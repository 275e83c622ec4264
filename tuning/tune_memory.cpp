#include "tuning/tune_memory.h"

#include <unistd.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tuning/library_hooks.h"

namespace mcrp::tuning {
namespace {

// The library answers with memory only while its fake device is on.
bool fake_device_here() {
  const LibraryHooks& hooks = library_hooks();
  if (hooks.fake_device_alloc == nullptr || hooks.fake_device_free == nullptr) return false;
  void* probe = hooks.fake_device_alloc(1);
  hooks.fake_device_free(probe);
  return probe != nullptr;
}

bool on_every_rank(bool mine, MPI_Comm world) {
  int local = mine ? 1 : 0, all = 0;
  PMPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, world);
  return all == 1;
}

// Ranks sharing a GPU without the MPS daemon time-slice it, so every small GPU step costs milliseconds
// of context switching and the table would be tuned to that. Said once per node.
void warn_if_sharing_without_mps(int node_ranks, int local_rank, int gpus) {
  if (local_rank != 0 || node_ranks <= gpus) return;
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(pipe != nullptr && pipe[0] != '\0' ? pipe : "/tmp/nvidia-mps") + "/control";
  if (access(control.c_str(), F_OK) == 0) return;
  std::fprintf(stderr,
               "mcrpmpi-tune: warning: %d ranks share %d GPU(s) on this node without the CUDA MPS daemon; their "
               "GPU work is time-sliced and small calls measure milliseconds. Run it as scripts/with-mps -- "
               "mpiexec ... mcrpmpi-tune (docs/tuning.md).\n",
               node_ranks, gpus);
}

bool every_rank_has_a_gpu(MPI_Comm world) {
  int count = 0;
  const bool mine = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  const bool all = on_every_rank(mine, world);
  if (mine) {
    // One device per rank on a node, round robin, before anything touches the GPU.
    MPI_Comm node;
    PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local = 0, node_ranks = 0;
    PMPI_Comm_rank(node, &local);
    PMPI_Comm_size(node, &node_ranks);
    PMPI_Comm_free(&node);
    cudaSetDevice(local % count);
    warn_if_sharing_without_mps(node_ranks, local, count);
  }
  return all;
}

}  // namespace

DeviceMemory choose_device_memory(MPI_Comm world) {
  if (on_every_rank(fake_device_here(), world)) return DeviceMemory::fake_device;
  return every_rank_has_a_gpu(world) ? DeviceMemory::cuda : DeviceMemory::none;
}

DeviceBuffer::DeviceBuffer(DeviceMemory memory, std::size_t bytes) : memory_(memory) {
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  if (memory_ == DeviceMemory::fake_device) {
    data_ = library_hooks().fake_device_alloc(size);
    if (data_ != nullptr) std::memset(data_, 0, size);
  } else if (memory_ == DeviceMemory::cuda) {
    if (cudaMalloc(&data_, size) != cudaSuccess) data_ = nullptr;
    else cudaMemset(data_, 0, size);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ == nullptr) return;
  if (memory_ == DeviceMemory::fake_device) library_hooks().fake_device_free(data_);
  else cudaFree(data_);
}

void synchronize(DeviceMemory memory) {
  if (memory == DeviceMemory::cuda) cudaDeviceSynchronize();
}

}  // namespace mcrp::tuning
