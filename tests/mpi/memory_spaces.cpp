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
  using LegacyWriteFn = void (*)(void*, const void*, std::size_t);
  using LegacySyncFn = void (*)();
  FakeDeviceMemory(AllocFn alloc, FreeFn release) : alloc_(alloc), free_(release) {}
  // Uploads go on the fake legacy default stream and downloads synchronize it first, as a program's
  // kernels and cudaMemcpy calls on the default stream would (device/fake_device.h).
  void through_legacy_stream(LegacyWriteFn write, LegacySyncFn synchronize) {
    legacy_write_ = write;
    legacy_synchronize_ = synchronize;
  }
  void* allocate(std::size_t bytes) override { return alloc_(bytes == 0 ? 1 : bytes); }
  void release(void* pointer) override { free_(pointer); }
  void upload(void* to, const void* from, std::size_t bytes) override {
    if (legacy_write_ != nullptr) {
      legacy_write_(to, from, bytes);
    } else {
      host_.upload(to, from, bytes);
    }
  }
  void download(void* to, const void* from, std::size_t bytes) override {
    if (legacy_synchronize_ != nullptr) legacy_synchronize_();
    host_.download(to, from, bytes);
  }
  const char* name() const override { return legacy_write_ != nullptr ? "fake-device-legacy" : "fake-device"; }

 private:
  AllocFn alloc_;
  FreeFn free_;
  LegacyWriteFn legacy_write_ = nullptr;
  LegacySyncFn legacy_synchronize_ = nullptr;
  HostMemory host_;
};

template <class Fn>
Fn library_function(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// The library's allocator, when the library is loaded and its fake device is on; with
// `legacy_stream`, uploads through its fake legacy default stream.
std::unique_ptr<MemorySpace> fake_device_memory(bool legacy_stream, std::string* why) {
  auto alloc = library_function<FakeDeviceMemory::AllocFn>("mcrpmpi_fake_device_alloc");
  auto release = library_function<FakeDeviceMemory::FreeFn>("mcrpmpi_fake_device_free");
  auto legacy_write = library_function<FakeDeviceMemory::LegacyWriteFn>("mcrpmpi_fake_device_legacy_write");
  auto legacy_synchronize = library_function<FakeDeviceMemory::LegacySyncFn>("mcrpmpi_fake_device_legacy_synchronize");
  if (alloc == nullptr || release == nullptr || legacy_write == nullptr || legacy_synchronize == nullptr) {
    *why = "the fake device needs libmcrpmpi (linked or preloaded)";
    return nullptr;
  }
  void* probe = alloc(1);
  if (probe == nullptr) {
    *why = "the fake device is off (set MCRPMPI_FAKE_DEVICE=1)";
    return nullptr;
  }
  release(probe);
  auto space = std::make_unique<FakeDeviceMemory>(alloc, release);
  if (legacy_stream) space->through_legacy_stream(legacy_write, legacy_synchronize);
  return space;
}

}  // namespace

std::unique_ptr<MemorySpace> make_memory_space(const std::string& name, MPI_Comm comm) {
  if (name == "device" || name == "device-legacy") {
    // select_cuda_device prints the reason itself and decides alike on every rank.
    return select_cuda_device(comm) ? std::make_unique<DeviceMemory>(name == "device-legacy") : nullptr;
  }
  std::string why;
  std::unique_ptr<MemorySpace> space;
  if (name == "host") {
    space = std::make_unique<HostMemory>();
  } else if (name == "fake-device" || name == "fake-device-legacy") {
    space = fake_device_memory(name == "fake-device-legacy", &why);
  } else {
    std::fprintf(stderr, "unknown memory space '%s' (host, fake-device, fake-device-legacy, device, device-legacy)\n", name.c_str());
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

std::unique_ptr<MemorySpace> space_option(int argc, char** argv, const char* fallback) {
  return make_memory_space(option(argc, argv, "--space", fallback), MPI_COMM_WORLD);
}

std::unique_ptr<MemorySpace> space_from_arguments(int argc, char** argv) {
  const char* chosen = "device";
  int flags = 0;
  for (const char* name : {"host", "fake-device", "fake-device-legacy", "device-legacy"}) {
    if (!flag(argc, argv, (std::string("--") + name).c_str())) continue;
    chosen = name;
    ++flags;
  }
  if (flags > 1) {
    std::fprintf(stderr, "%s: --host, --fake-device, --fake-device-legacy and --device-legacy exclude each other\n",
                 argc > 0 ? argv[0] : "test");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return make_memory_space(chosen, MPI_COMM_WORLD);
}

SendReceiveSpaces send_receive_spaces_from_arguments(int argc, char** argv) {
  SendReceiveSpaces spaces;
  const std::string both = option(argc, argv, "--space", "host");
  spaces.send_name = option(argc, argv, "--send-space", both);
  spaces.recv_name = option(argc, argv, "--recv-space", both);
  spaces.send = make_memory_space(spaces.send_name, MPI_COMM_WORLD);
  if (spaces.send) spaces.recv = make_memory_space(spaces.recv_name, MPI_COMM_WORLD);
  return spaces;
}

}  // namespace mcrp_test
