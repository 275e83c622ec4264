// Whether the library hands device buffers to the base MPI as they are: it does when the base MPI
// reports CUDA support (MPIX_Query_cuda_support), and the CPU tests make it do so on the fake
// device with MCRPMPI_FAKE_CUDA_AWARE_BASE=1 (device/fake_device.h; no base MPI they meet has CUDA
// support). Then device buffers meet the base MPI's own behaviour, defects included, as host
// buffers do, except where the library's own protocol carries them (a device-only communicator).
#pragma once
#include <dlfcn.h>

#include <cstdlib>

namespace mcrp_test {

inline bool base_takes_device_buffers() {
  static const bool takes = [] {
    const char* fake = std::getenv("MCRPMPI_FAKE_CUDA_AWARE_BASE");
    if (fake != nullptr && fake[0] != '\0' && fake[0] != '0') return true;
    // The base MPI's own answer (the library's MPIX_Query_cuda_support always says 1); looked up,
    // since not every base MPI has the call.
    using Query = int (*)();
    auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "PMPIX_Query_cuda_support"));
    return query != nullptr && query() == 1;
  }();
  return takes;
}

}  // namespace mcrp_test
