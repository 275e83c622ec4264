#include "device/handles.h"

#include <cstdint>
#include <cstring>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"

namespace mcrp::device {
namespace {

// The fake device's streams and events: non-null tokens that name nothing.
template <typename Handle>
Handle fake_token() {
  return reinterpret_cast<Handle>(static_cast<std::uintptr_t>(0x1000));
}

}  // namespace

cudaError_t destroy_stream(cudaStream_t stream) { return fake_device() ? cudaSuccess : cudaStreamDestroy(stream); }
cudaError_t destroy_event(cudaEvent_t event) { return fake_device() ? cudaSuccess : cudaEventDestroy(event); }

Status create_ordered_stream(Stream& stream) {
  if (fake_device()) {
    stream.reset(fake_token<cudaStream_t>());
    return {};
  }
  cudaStream_t handle = nullptr;
  MCRP_TRY(cuda_status(cudaStreamCreateWithFlags(&handle, cudaStreamDefault), "cudaStreamCreate"));
  stream.reset(handle);
  return {};
}

Status create_event(Event& event) {
  if (fake_device()) {
    event.reset(fake_token<cudaEvent_t>());
    return {};
  }
  cudaEvent_t handle = nullptr;
  MCRP_TRY(cuda_status(cudaEventCreateWithFlags(&handle, cudaEventDisableTiming), "cudaEventCreate"));
  event.reset(handle);
  return {};
}

DeviceGuard::DeviceGuard(int device) {
  if (fake_device()) return;  // previous_ stays -1: nothing to restore
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (device >= 0 && device != previous_) cudaSetDevice(device);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ < 0) return;
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_) {
    cudaSetDevice(previous_);
  }
}

Status copy_async(void* to, const void* from, std::size_t bytes, cudaStream_t stream, const char* what) {
  if (bytes == 0) return {};
  if (fake_device()) {
    std::memmove(to, from, bytes);
    return {};
  }
  return cuda_status(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream), what);
}

void copy_rows_now(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
                   std::size_t rows) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::memmove(static_cast<char*>(to) + r * to_pitch, static_cast<const char*>(from) + r * from_pitch, width);
  }
}

Status copy_rows_async(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
                       std::size_t rows, cudaStream_t stream, const char* what) {
  if (rows == 1) return copy_async(to, from, width, stream, what);
  if (width == 0 || rows == 0) return {};
  if (fake_device()) {
    copy_rows_now(to, to_pitch, from, from_pitch, width, rows);
    return {};
  }
  return cuda_status(cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, width, rows, cudaMemcpyDefault, stream), what);
}

Status record_event(cudaStream_t stream, Event& event) {
  if (!event) MCRP_TRY(create_event(event));
  if (fake_device()) return {};
  return cuda_status(cudaEventRecord(event.get(), stream), "cudaEventRecord");
}

Status query_event(cudaEvent_t event, bool* done) {
  if (fake_device()) {
    *done = true;
    return {};
  }
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaErrorNotReady) return {};
  MCRP_TRY(cuda_status(state, "cudaEventQuery"));
  *done = true;
  return {};
}

}  // namespace mcrp::device
