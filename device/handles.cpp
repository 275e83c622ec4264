#include "device/handles.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"

namespace mcrp::device {
namespace {

// The fake device's events (async mode's aside): a non-null token that names nothing.
cudaEvent_t fake_event_token() { return reinterpret_cast<cudaEvent_t>(static_cast<std::uintptr_t>(0x1000)); }

// Events are made once and reused: every staged and NCCL call records one or two, and
// cudaEventCreate/cudaEventDestroy cost far more than a recycled handle. An event belongs to the
// device that was current when it was made, so the idle ones are kept per device.
class EventPool {
 public:
  cudaError_t take(cudaEvent_t* event) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) device = -1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<cudaEvent_t>& idle = idle_[device];
      if (!idle.empty()) {
        *event = idle.back();
        idle.pop_back();
        return cudaSuccess;
      }
    }
    const cudaError_t created = cudaEventCreateWithFlags(event, cudaEventDisableTiming);
    if (created != cudaSuccess) return created;
    std::lock_guard<std::mutex> lock(mutex_);
    device_of_[*event] = device;
    return cudaSuccess;
  }

  // Recording it again later is safe: a stream that waits on an event waits for the record that
  // preceded its cudaStreamWaitEvent, and the owner no longer queries it.
  cudaError_t give_back(cudaEvent_t event) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto known = device_of_.find(event);
      if (known != device_of_.end()) {
        std::vector<cudaEvent_t>& idle = idle_[known->second];
        if (idle.size() < kIdlePerDevice) {
          idle.push_back(event);
          return cudaSuccess;
        }
        device_of_.erase(known);
      }
    }
    return cudaEventDestroy(event);
  }

 private:
  static constexpr std::size_t kIdlePerDevice = 64;
  std::mutex mutex_;
  std::unordered_map<int, std::vector<cudaEvent_t>> idle_;
  std::unordered_map<cudaEvent_t, int> device_of_;
};

EventPool& event_pool() {
  static EventPool* pool = new EventPool;  // never destroyed: events may be released during exit
  return *pool;
}

// Streams get tokens of their own, so that a fake NCCL can tell whose work a stream carries
// (fake_pageable_copy_waits).
cudaStream_t fake_stream_token() {
  static std::atomic<std::uintptr_t> next{0x2000};
  return reinterpret_cast<cudaStream_t>(next.fetch_add(0x10, std::memory_order_relaxed));
}

}  // namespace

cudaError_t destroy_stream(cudaStream_t stream) { return fake_device() ? cudaSuccess : cudaStreamDestroy(stream); }
cudaError_t destroy_event(cudaEvent_t event) {
  if (!fake_device()) return event_pool().give_back(event);
  if (event != fake_event_token()) fake_event_destroy(event);
  return cudaSuccess;
}

Status create_library_stream(Stream& stream) {
  if (fake_device()) {
    stream.reset(fake_stream_token());
    return {};
  }
  cudaStream_t handle = nullptr;
  MCRP_TRY(cuda_status(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking), "cudaStreamCreate"));
  stream.reset(handle);
  return {};
}

Status create_event(Event& event) {
  if (fake_device()) {
    event.reset(fake_events_tracked() ? fake_event_create() : fake_event_token());
    return {};
  }
  cudaEvent_t handle = nullptr;
  MCRP_TRY(cuda_status(event_pool().take(&handle), "cudaEventCreate"));
  event.reset(handle);
  return {};
}

// One cudaGetDevice when the device is already current (the common case), nothing on the way out.
DeviceGuard::DeviceGuard(int device) {
  if (fake_device() || device < 0) return;  // previous_ stays -1: nothing to restore
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current == device) return;
  if (cudaSetDevice(device) == cudaSuccess) previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Status copy_async(void* to, const void* from, std::size_t bytes, cudaStream_t stream, const char* what) {
  if (bytes == 0) return {};
  if (fake_device()) {
    fake_pageable_copy_waits(to, from, stream);
    fake_copy(stream, [to, from, bytes] { std::memmove(to, from, bytes); });
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
    fake_pageable_copy_waits(to, from, stream);
    fake_copy(stream, [=] { copy_rows_now(to, to_pitch, from, from_pitch, width, rows); });
    return {};
  }
  return cuda_status(cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, width, rows, cudaMemcpyDefault, stream), what);
}

Status record_event(cudaStream_t stream, Event& event) {
  if (!event) MCRP_TRY(create_event(event));
  if (fake_device()) {
    const FakeCudaCall call;
    if (event.get() != fake_event_token()) fake_event_record(event.get(), stream);
    return {};
  }
  return cuda_status(cudaEventRecord(event.get(), stream), "cudaEventRecord");
}

Status query_event(cudaEvent_t event, bool* done) {
  if (fake_device()) {
    *done = event == fake_event_token() || fake_event_query(event);
    return {};
  }
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaErrorNotReady) return {};
  MCRP_TRY(cuda_status(state, "cudaEventQuery"));
  *done = true;
  return {};
}

bool stream_busy(cudaStream_t stream) {
  if (stream == nullptr) return false;
  if (fake_device()) return fake_stream_busy(stream);
  return cudaStreamQuery(stream) == cudaErrorNotReady;
}

}  // namespace mcrp::device
