#include "tests/gpu/device_memory.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <cstdlib>
#include <new>

namespace mcrp_test {
void require_cuda(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(rc));
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void* DeviceMemory::allocate(std::size_t bytes) {
  void* pointer = nullptr;
  require_cuda(cudaMalloc(&pointer, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return pointer;
}

void DeviceMemory::release(void* pointer) { require_cuda(cudaFree(pointer), "cudaFree"); }

DeviceMemory::~DeviceMemory() { release_staging(); }

void DeviceMemory::upload(void* to, const void* from, std::size_t bytes) {
  if (bytes == 0) return;
  if (!late_uploads_) {
    require_cuda(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
    return;
  }
  void* source = nullptr;
  require_cuda(cudaMallocHost(&source, bytes), "cudaMallocHost");
  std::memcpy(source, from, bytes);
  staging_.push_back(source);
  require_cuda(cudaLaunchHostFunc(cudaStreamLegacy, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
                             nullptr),
          "cudaLaunchHostFunc");
  require_cuda(cudaMemcpyAsync(to, source, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy), "cudaMemcpyAsync to device");
}

void DeviceMemory::download(void* to, const void* from, std::size_t bytes) {
  if (bytes != 0) require_cuda(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  release_staging();
}

void DeviceMemory::release_staging() {
  if (staging_.empty()) return;
  require_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  for (void* source : staging_) require_cuda(cudaFreeHost(source), "cudaFreeHost");
  staging_.clear();
}

bool select_cuda_device(MPI_Comm comm) {
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  const int local = probe == cudaSuccess && devices > 0 ? 1 : 0;
  int everywhere = 0;
  PMPI_Allreduce(&local, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (everywhere == 0) {
    if (rank == 0) {
      std::printf("SKIPPED: no CUDA device (%s)\n", probe != cudaSuccess ? cudaGetErrorString(probe) : "0 devices");
      std::fflush(stdout);
    }
    return false;
  }
  require_cuda(cudaSetDevice(rank % devices), "cudaSetDevice");
  return true;
}

}  // namespace mcrp_test
