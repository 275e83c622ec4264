#include "device/ordered_streams.h"

#include <map>
#include <mutex>
#include <utility>

#include "device/handles.h"

namespace mcrp::device {

namespace {

enum class Direction { out, back };

Status library_stream(int device, Direction direction, cudaStream_t* stream) {
  static std::mutex mutex;
  static auto* streams = new std::map<std::pair<int, Direction>, Stream>;  // leaked on purpose: used until exit
  std::lock_guard<std::mutex> lock(mutex);
  Stream& slot = (*streams)[{device, direction}];
  if (!slot) {
    DeviceGuard guard(device);
    MCRP_TRY(create_ordered_stream(slot));
  }
  *stream = slot.get();
  return {};
}

}  // namespace

Status copy_stream(int device, cudaStream_t* stream) { return library_stream(device, Direction::out, stream); }

Status copy_back_stream(int device, cudaStream_t* stream) { return library_stream(device, Direction::back, stream); }

}  // namespace mcrp::device
