// RAII owners of CUDA streams and events, and a guard that makes a device current for a scope.
// Destructors never throw and ignore errors: they run on shutdown paths where the driver may be gone.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "device/status.h"

namespace mcrp::device {

template <typename Handle, cudaError_t (*Destroy)(Handle)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) : handle_(handle) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(nullptr); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void reset(Handle handle) {
    if (handle_ != nullptr) Destroy(handle_);
    handle_ = handle;
  }

 private:
  Handle handle_ = nullptr;
};

// Destroy functions that know the fake device's tokens (device/fake_device.h).
cudaError_t destroy_stream(cudaStream_t stream);
cudaError_t destroy_event(cudaEvent_t event);

using Stream = UniqueHandle<cudaStream_t, destroy_stream>;
using Event = UniqueHandle<cudaEvent_t, destroy_event>;

// A stream of the library's own on the current device, created non-blocking: a blocking stream
// would make the application's later work on the legacy default stream wait for the library's,
// which may wait for peers (an NCCL kernel runs until every rank has joined), so a default-stream
// cudaMemcpy after MPI_Iallreduce could hang the program. Ordering after the application's
// earlier work is explicit instead (device/ordered_streams.h, order_after_legacy_stream).
Status create_library_stream(Stream& stream);
// An event without timing, cheap to record and query, on the current device. Taken from a pool of
// idle events and given back to it when the Event is destroyed (handles.cpp).
Status create_event(Event& event);

// Work on a stream. copy_async copies between any two kinds of memory (cudaMemcpyDefault); `what`
// names the step in an error. record_event records `event` on `stream` (creating it on first use);
// query_event asks without blocking whether it has completed.
Status copy_async(void* to, const void* from, std::size_t bytes, cudaStream_t stream, const char* what);
// `rows` rows of `width` bytes, row r from from + r * from_pitch to to + r * to_pitch, as one copy
// (cudaMemcpy2DAsync, any kinds of memory). copy_rows_now does it on the CPU, for host memory.
Status copy_rows_async(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
                       std::size_t rows, cudaStream_t stream, const char* what);
void copy_rows_now(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
                   std::size_t rows);
Status record_event(cudaStream_t stream, Event& event);
Status query_event(cudaEvent_t event, bool* done);
// Whether work is still running on `stream` (false too when CUDA reports an error there: that work
// is not coming to an end anyone waits for). The fake device's streams are never busy.
bool stream_busy(cudaStream_t stream);

// Makes `device` current for the scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;  // the device to restore; -1 when the guard switched nothing
};

}  // namespace mcrp::device
