#include "device/ordered_streams.h"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"

namespace mcrp::device {

namespace {

enum class Direction { out, back, finish };
constexpr int kDirections = 3;

// The library's streams, one per device and direction, made at first use and kept until exit.
// Every staged or device-only call asks for one, so the devices a node can have are answered
// without a lock (cost.device_calls); an ordinal beyond them takes the lock and the map.
class LibraryStreams {
 public:
  Status get(int device, Direction direction, cudaStream_t* stream) {
    const auto d = static_cast<int>(direction);
    const bool cached = device >= 0 && device < kCachedDevices;
    if (cached) {
      *stream = cached_[device][d].load(std::memory_order_acquire);
      if (*stream != nullptr) return {};
    }
    std::lock_guard<std::mutex> lock(mutex_);
    Stream& slot = made_[{device, direction}];
    if (!slot) {
      DeviceGuard guard(device);
      MCRP_TRY(create_library_stream(slot));
    }
    *stream = slot.get();
    if (cached) cached_[device][d].store(*stream, std::memory_order_release);
    return {};
  }

 private:
  static constexpr int kCachedDevices = 64;
  std::mutex mutex_;
  std::map<std::pair<int, Direction>, Stream> made_;  // owns the streams
  std::atomic<cudaStream_t> cached_[kCachedDevices][kDirections] = {};
};

Status library_stream(int device, Direction direction, cudaStream_t* stream) {
  static auto* streams = new LibraryStreams;  // leaked on purpose: used until exit
  return streams->get(device, direction, stream);
}

Status ordered_library_stream(int device, Direction direction, cudaStream_t* stream) {
  MCRP_TRY(library_stream(device, direction, stream));
  return order_after_legacy_stream(device, *stream);
}

}  // namespace

Status order_after_legacy_stream(int device, cudaStream_t stream) {
  if (fake_device()) {
    fake_order_after_legacy();
    return {};
  }
  DeviceGuard on_device(device);  // cudaStreamLegacy means the current device's
  const cudaError_t idle = cudaStreamQuery(cudaStreamLegacy);
  if (idle == cudaSuccess) return {};
  if (idle != cudaErrorNotReady) return cuda_status(idle, "cudaStreamQuery (legacy default stream)");
  Event issued;  // pooled: recording it again later does not disturb this wait
  MCRP_TRY(record_event(cudaStreamLegacy, issued));
  return cuda_status(cudaStreamWaitEvent(stream, issued.get(), 0), "cudaStreamWaitEvent (legacy default stream)");
}

Status copy_stream(int device, cudaStream_t* stream) { return ordered_library_stream(device, Direction::out, stream); }

Status wait_for_legacy_stream(int device, ProgressHook& hook) {
  DeviceGuard on_device(device);  // the wait's event belongs to the stream's device
  cudaStream_t stream = nullptr;
  MCRP_TRY(copy_stream(device, &stream));
  return wait_stream(stream, hook);
}

Status copy_back_stream(int device, cudaStream_t* stream) {
  return ordered_library_stream(device, Direction::back, stream);
}

Status finishing_stream(int device, cudaStream_t* stream) { return library_stream(device, Direction::finish, stream); }

}  // namespace mcrp::device
