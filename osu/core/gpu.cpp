#include "osu/core/gpu.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace osu {
namespace {

// A failed CUDA call inside a timed benchmark leaves nothing sensible to measure: say which and stop
// all ranks rather than report numbers from a broken run.
void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "osu: %s failed: %s\n", what, cudaGetErrorString(err));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// libmcrpmpi's fake device allocator (device/fake_device.h), when the library is loaded.
using FakeAlloc = void* (*)(std::size_t);
using FakeFree = void (*)(void*);
FakeAlloc fake_alloc() { return reinterpret_cast<FakeAlloc>(dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_alloc")); }
FakeFree fake_free() { return reinterpret_cast<FakeFree>(dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_free")); }

bool fake_device_on() {
  const FakeAlloc alloc = fake_alloc();
  void* probe = alloc != nullptr ? alloc(1) : nullptr;
  if (probe != nullptr) fake_free()(probe);
  return probe != nullptr;
}

bool everywhere(bool mine, MPI_Comm comm, const char* why) {
  int local = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LAND, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (!all && rank == 0) std::printf("# %s: nothing to measure\n", why);
  return all != 0;
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
  if (memory == Memory::fake) return everywhere(fake_device_on(), comm, "no fake device (libmcrpmpi, MCRPMPI_FAKE_DEVICE=1)");
  if (memory != Memory::cuda) return true;
  int devices = cuda_device_count();
  if (!everywhere(devices > 0, comm, "no CUDA device present")) return false;
  check_cuda(cudaSetDevice(node_place(comm).rank % devices), "cudaSetDevice");
  return true;
}

Buffer::Buffer(Memory memory, std::size_t bytes) : memory_(memory) {
  if (bytes == 0) bytes = 1;  // MPI wants a valid address even for count 0
  host_.reset(new unsigned char[bytes]);
  if (memory_ == Memory::host) {
    data_ = host_.get();
  } else if (memory_ == Memory::fake) {
    data_ = fake_alloc()(bytes);
  } else {
    check_cuda(cudaMalloc(&data_, bytes), "cudaMalloc");
  }
}

Buffer::~Buffer() {
  if (memory_ == Memory::cuda) cudaFree(data_);
  if (memory_ == Memory::fake) fake_free()(data_);
}

void Buffer::push(std::size_t bytes) {
  if (memory_ == Memory::fake && bytes > 0) std::memcpy(data_, host_.get(), bytes);
  if (memory_ == Memory::cuda && bytes > 0)
    check_cuda(cudaMemcpy(data_, host_.get(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void Buffer::pull(std::size_t bytes) {
  if (memory_ == Memory::fake && bytes > 0) std::memcpy(host_.get(), data_, bytes);
  if (memory_ == Memory::cuda && bytes > 0)
    check_cuda(cudaMemcpy(host_.get(), data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

}  // namespace osu
