#include "tests/mpi/memory_spaces.h"

#include <dlfcn.h>

#include <cstdio>

#include "tests/gpu/device_memory.h"
#include "tests/mpi/command_line.h"

namespace mcrp_test {
namespace {

class FakeDeviceMemory final : public MemorySpace {
 public:
  using AllocFn = void* (*)(std::size_t);
  using FreeFn = void (*)(void*);
  FakeDeviceMemory(AllocFn alloc, FreeFn release) : alloc_(alloc), free_(release) {}
  void* allocate(std::size_t bytes) override { return alloc_(bytes == 0 ? 1 : bytes); }
  void release(void* pointer) override { free_(pointer); }
  void upload(void* to, const void* from, std::size_t bytes) override { host_.upload(to, from, bytes); }
  void download(void* to, const void* from, std::size_t bytes) override { host_.download(to, from, bytes); }
  const char* name() const override { return "fake-device"; }

 private:
  AllocFn alloc_;
  FreeFn free_;
  HostMemory host_;
};

// The library's allocator, when the library is loaded and its fake device is on.
std::unique_ptr<MemorySpace> fake_device_memory(std::string* why) {
  auto alloc = reinterpret_cast<FakeDeviceMemory::AllocFn>(dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_alloc"));
  auto release = reinterpret_cast<FakeDeviceMemory::FreeFn>(dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_free"));
  if (alloc == nullptr || release == nullptr) {
    *why = "the fake device needs libmcrpmpi (linked or preloaded)";
    return nullptr;
  }
  void* probe = alloc(1);
  if (probe == nullptr) {
    *why = "the fake device is off (set MCRPMPI_FAKE_DEVICE=1)";
    return nullptr;
  }
  release(probe);
  return std::make_unique<FakeDeviceMemory>(alloc, release);
}

}  // namespace

std::unique_ptr<MemorySpace> make_memory_space(const std::string& name, MPI_Comm comm) {
  if (name == "device") {
    // select_cuda_device prints the reason itself and decides alike on every rank.
    return select_cuda_device(comm) ? std::make_unique<DeviceMemory>() : nullptr;
  }
  std::string why;
  std::unique_ptr<MemorySpace> space;
  if (name == "host") {
    space = std::make_unique<HostMemory>();
  } else if (name == "fake-device") {
    space = fake_device_memory(&why);
  } else {
    std::fprintf(stderr, "unknown memory space '%s' (host, fake-device, device)\n", name.c_str());
    MPI_Abort(comm, 2);
  }
  const int here = space ? 1 : 0;
  int everywhere = 0;
  PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (everywhere == 0) {
    if (rank == 0) std::printf("SKIPPED: %s\n", why.empty() ? "not available on every rank" : why.c_str());
    std::fflush(stdout);
    return nullptr;
  }
  return space;
}

std::unique_ptr<MemorySpace> space_from_arguments(int argc, char** argv) {
  const bool host = flag(argc, argv, "--host");
  const bool fake_device = flag(argc, argv, "--fake-device");
  if (host && fake_device) {
    std::fprintf(stderr, "%s: --host and --fake-device exclude each other\n", argc > 0 ? argv[0] : "test");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return make_memory_space(host ? "host" : fake_device ? "fake-device" : "device", MPI_COMM_WORLD);
}

}  // namespace mcrp_test
