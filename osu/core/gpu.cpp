#include "osu/core/gpu.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace osu {
namespace {

// A failed CUDA call inside a timed benchmark leaves nothing sensible to measure: say which and stop
// all ranks rather than report numbers from a broken run.
void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "osu: %s failed: %s\n", what, cudaGetErrorString(err));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

NodePlace node_place(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodePlace place{0, 1};
  MPI_Comm_rank(node, &place.rank);
  MPI_Comm_size(node, &place.ranks);
  MPI_Comm_free(&node);
  return place;
}

bool select_device(Memory memory, MPI_Comm comm) {
  if (memory != Memory::cuda) return true;
  int devices = cuda_device_count();
  int mine = devices > 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
  if (!all) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) std::printf("# no CUDA device present: nothing to measure\n");
    return false;
  }
  check_cuda(cudaSetDevice(node_place(comm).rank % devices), "cudaSetDevice");
  return true;
}

Buffer::Buffer(Memory memory, std::size_t bytes) : memory_(memory) {
  if (bytes == 0) bytes = 1;  // MPI wants a valid address even for count 0
  host_.reset(new unsigned char[bytes]);
  if (memory_ == Memory::host) {
    data_ = host_.get();
  } else {
    check_cuda(cudaMalloc(&data_, bytes), "cudaMalloc");
  }
}

Buffer::~Buffer() {
  if (memory_ == Memory::cuda) cudaFree(data_);
}

void Buffer::push(std::size_t bytes) {
  if (memory_ == Memory::cuda && bytes > 0)
    check_cuda(cudaMemcpy(data_, host_.get(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void Buffer::pull(std::size_t bytes) {
  if (memory_ == Memory::cuda && bytes > 0)
    check_cuda(cudaMemcpy(host_.get(), data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

}  // namespace osu
