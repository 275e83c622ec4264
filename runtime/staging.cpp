#include "runtime/staging.h"

#include <algorithm>

#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/profile.h"

namespace mcrp {

Status stage_in(const BufferSide& side, const TypeInfo& type, cudaStream_t stream, int stream_device,
                HostImage* image) {
  profile::StepTimer copying_in(profile::Step::queue);
  image->base = side.base;
  if (!side.significant()) return {};
  image->span = span_of(side, type);
  if (image->span.bytes() == 0) return {};
  const char* device_start = side.base + image->span.lo;
  const device::PointerInfo where = device::locate(device_start);
  if (where.kind != device::MemoryKind::device) return {};
  MCRP_TRY(device::order_after_memory_device(where, stream_device, stream));
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, image->span.bytes(), image->pinned));
  image->staged = true;
  image->base = span_base(image->pinned.data(), image->span.lo);
  if (side.read || !covers_span(side, type, image->span)) {
    MCRP_TRY(device::copy_async(image->pinned.data(), device_start, image->span.bytes(), stream,
                                "cudaMemcpyAsync (device to host)"));
  }
  return {};
}

Status stage_out(const BufferSide& side, const HostImage& image, cudaStream_t stream) {
  profile::StepTimer copying_out(profile::Step::finish);
  if (!image.staged || !side.written) return {};
  return device::copy_async(side.base + image.span.lo, image.pinned.data(), image.span.bytes(), stream,
                            "cudaMemcpyAsync (host to device)");
}

Status stage_out_received(const BufferSide& side, const TypeInfo& type, const HostImage& image, MPI_Count bytes,
                          cudaStream_t stream) {
  profile::StepTimer copying_out(profile::Step::finish);
  if (!image.staged || !side.written || bytes <= 0 || type.size <= 0) return {};
  std::size_t length = static_cast<std::size_t>(bytes);
  if (!type.contiguous()) {
    // The elements the message reached, holes included (their bytes came in with stage_in).
    BufferSide reached = side;
    reached.blocks = {Block{0, (bytes + type.size - 1) / type.size}};
    length = span_of(reached, type).bytes();
  }
  length = std::min(length, image.span.bytes());
  return device::copy_async(side.base + image.span.lo, image.pinned.data(), length, stream,
                            "cudaMemcpyAsync (host to device)");
}

}  // namespace mcrp
