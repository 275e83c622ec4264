#include "device/handles.h"

#include "device/cuda_runtime.h"

namespace mcrp::device {

Status create_ordered_stream(Stream& stream) {
  cudaStream_t handle = nullptr;
  MCRP_TRY(cuda_status(cudaStreamCreateWithFlags(&handle, cudaStreamDefault), "cudaStreamCreate"));
  stream.reset(handle);
  return {};
}

Status create_event(Event& event) {
  cudaEvent_t handle = nullptr;
  MCRP_TRY(cuda_status(cudaEventCreateWithFlags(&handle, cudaEventDisableTiming), "cudaEventCreate"));
  event.reset(handle);
  return {};
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (device >= 0 && device != previous_) cudaSetDevice(device);
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  if (previous_ >= 0 && cudaGetDevice(&current) == cudaSuccess && current != previous_) {
    cudaSetDevice(previous_);
  }
}

}  // namespace mcrp::device
