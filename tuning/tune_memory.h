// The device memory mcrpmpi-tune measures on: CUDA memory of this rank's GPU, or, on a machine
// without one, the library's fake device (MCRPMPI_FAKE_DEVICE=1, device/fake_device.h: host memory
// the library treats as device memory), so that CI runs the measuring code through both paths (the
// NCCL one with the fake NCCL, MCRPMPI_NCCL_LIBRARY).
#pragma once
#include <mpi.h>

#include <cstddef>

namespace mcrp::tuning {

enum class DeviceMemory { none, cuda, fake_device };

// Collective over `world`, the same answer on every rank: fake_device when the library hands out fake
// device memory on every rank, else cuda when every rank has a GPU (each rank then makes one of its
// node's GPUs current, round robin, and rank 0 of a node warns when ranks share a GPU without the
// MPS daemon), else none.
DeviceMemory choose_device_memory(MPI_Comm world);

// `bytes` (at least 1) of device memory, zeroed; get() is null when the allocation failed.
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceMemory memory, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* get() const { return static_cast<char*>(data_); }

 private:
  DeviceMemory memory_;
  void* data_ = nullptr;
};

// Waits for this rank's device work; nothing to wait for on the fake device (its copies are done
// when issued).
void synchronize(DeviceMemory memory);

}  // namespace mcrp::tuning
