// CUDA device memory for the shared checks (tests/mpi/memory_space.h), and how GPU tests decide to
// skip: no usable CUDA device means exit code 77 with the reason printed. Programs choose it by name
// through tests/mpi/memory_spaces.h, which also offers the fake device for CPU CI.
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <vector>

#include "tests/mpi/memory_space.h"

namespace mcrp_test {

// With `late_uploads` an upload is issued on the legacy default stream behind a host function that
// sleeps 2 ms, as a slow kernel of the application would be: the library must order its work after
// it (`device-legacy` memory; the fake device's counterpart is `fake-device-legacy`). Downloads are
// cudaMemcpy on that stream, which waits for it.
class DeviceMemory final : public MemorySpace {
 public:
  explicit DeviceMemory(bool late_uploads = false) : late_uploads_(late_uploads) {}
  ~DeviceMemory() override;
  void* allocate(std::size_t bytes) override;
  void release(void* pointer) override;
  void upload(void* to, const void* from, std::size_t bytes) override;
  void download(void* to, const void* from, std::size_t bytes) override;
  const char* name() const override { return late_uploads_ ? "device-legacy" : "device"; }

 private:
  void release_staging();  // once the legacy stream has finished with them

  bool late_uploads_;
  std::vector<void*> staging_;  // pinned sources of late uploads still queued
};

// After MPI_Init: picks this rank's device (rank modulo device count) and returns true, or prints
// why there is none (on rank 0 of `comm`) and returns false; then the caller finalizes and exits
// with kSkipExitCode (tests/mpi/memory_spaces.h). Every rank decides alike.
bool select_cuda_device(MPI_Comm comm);

// A failed CUDA call in a test harness is a broken machine, not a library result: prints which call
// failed and why, and aborts the job.
void require_cuda(cudaError_t rc, const char* what);

}  // namespace mcrp_test
