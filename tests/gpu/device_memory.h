// Device memory for the shared checks (tests/mpi/memory_space.h), and the one way GPU tests decide
// to skip: no usable CUDA device means exit code 77 with the reason printed.
#pragma once
#include <mpi.h>

#include "tests/mpi/memory_space.h"

namespace mcrp_test {

constexpr int kSkipCode = 77;

class DeviceMemory final : public MemorySpace {
 public:
  void* allocate(std::size_t bytes) override;
  void release(void* pointer) override;
  void upload(void* to, const void* from, std::size_t bytes) override;
  void download(void* to, const void* from, std::size_t bytes) override;
  const char* name() const override { return "device"; }
};

// After MPI_Init: picks this rank's device (rank modulo device count) and returns true, or prints
// why there is none (on rank 0 of `comm`) and returns false; then the caller finalizes and exits
// with kSkipCode. Every rank decides alike.
bool select_cuda_device(MPI_Comm comm);

// For tests that also run on the host: host memory when the first argument is --host (CPU CI checks
// the test's own references that way), else this rank's CUDA device (select_cuda_device on WORLD).
// Null when there is no device: the caller finalizes and exits with kSkipCode.
MemorySpace* space_from_arguments(int argc, char** argv);

}  // namespace mcrp_test
