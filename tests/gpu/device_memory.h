// CUDA device memory for the shared checks (tests/mpi/memory_space.h), and how GPU tests decide to
// skip: no usable CUDA device means exit code 77 with the reason printed. Programs choose it by name
// through tests/mpi/memory_spaces.h, which also offers the fake device for CPU CI.
#pragma once
#include <mpi.h>

#include "tests/mpi/memory_space.h"

namespace mcrp_test {

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
// with kSkipExitCode (tests/mpi/memory_spaces.h). Every rank decides alike.
bool select_cuda_device(MPI_Comm comm);

}  // namespace mcrp_test
