#include "device/ordered_streams.h"

#include <map>
#include <mutex>

#include "device/handles.h"

namespace mcrp::device {

Status copy_stream(int device, cudaStream_t* stream) {
  static std::mutex mutex;
  static auto* streams = new std::map<int, Stream>;  // leaked on purpose: used until process exit
  std::lock_guard<std::mutex> lock(mutex);
  Stream& slot = (*streams)[device];
  if (!slot) {
    DeviceGuard guard(device);
    MCRP_TRY(create_ordered_stream(slot));
  }
  *stream = slot.get();
  return {};
}

}  // namespace mcrp::device
