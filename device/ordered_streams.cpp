#include "device/ordered_streams.h"

#include <map>
#include <mutex>
#include <utility>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"

namespace mcrp::device {

namespace {

enum class Direction { out, back, finish };

Status library_stream(int device, Direction direction, cudaStream_t* stream) {
  static std::mutex mutex;
  static auto* streams = new std::map<std::pair<int, Direction>, Stream>;  // leaked on purpose: used until exit
  std::lock_guard<std::mutex> lock(mutex);
  Stream& slot = (*streams)[{device, direction}];
  if (!slot) {
    DeviceGuard guard(device);
    MCRP_TRY(create_library_stream(slot));
  }
  *stream = slot.get();
  return {};
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

Status copy_back_stream(int device, cudaStream_t* stream) {
  return ordered_library_stream(device, Direction::back, stream);
}

Status finishing_stream(int device, cudaStream_t* stream) { return library_stream(device, Direction::finish, stream); }

}  // namespace mcrp::device
