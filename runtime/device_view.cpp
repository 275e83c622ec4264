#include "runtime/device_view.h"

#include <algorithm>

#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/packing.h"

namespace mcrp {

std::size_t DeviceView::end() const {
  std::size_t last = 0;
  for (std::size_t i = 0; i < blocks(); ++i) last = std::max(last, offset(i) + bytes(i));
  return last;
}

void DeviceView::share_blocks(const DeviceView& other) {
  blocks_ = other.blocks_;
  size_ = other.size_;
  extent_ = other.extent_;
  packed_offsets_ = other.packed_offsets_;
  packed_ = other.packed_;
}

Status DeviceView::prepare(const BufferSide& side, const TypeInfo& type, int device, cudaStream_t stream,
                           device::ProgressHook& progress, const device::PointerInfo* base_memory) {
  blocks_ = nullptr;
  packed_offsets_.clear();
  if (!side.significant()) return {};
  blocks_ = &side.blocks;
  size_ = type.size;
  extent_ = type.extent;
  packed_ = !type.contiguous();
  std::size_t packed_offset = 0;
  if (packed_) {
    for (std::size_t i = 0; i < side.blocks.size(); ++i) {
      packed_offsets_.push_back(packed_offset);
      packed_offset += bytes(i);
    }
  }
  span_ = span_of(side, type);
  const device::PointerInfo where =
      base_memory != nullptr && span_.lo == 0 ? *base_memory : device::locate(side.base + span_.lo);
  if (!packed_) {
    data = side.base;
    relocated_ = device >= 0 && span_.bytes() > 0 && (where.kind != device::MemoryKind::device || where.device != device);
    if (!relocated_) return {};
    MCRP_TRY(device::acquire(device::BufferKind::device, device, span_.bytes(), scratch_));
    data = span_base(scratch_.data(), span_.lo);  // block offsets stay relative to the user's base
    // `stream` waits for its own device's default stream; a buffer on another GPU has that GPU's too.
    MCRP_TRY(device::order_after_memory_device(where, device, stream));
    if (!side.read && covers_span(side, type, span_)) return {};
    return device::copy_async(scratch_.data(), side.base + span_.lo, span_.bytes(), stream,
                              "cudaMemcpyAsync (to the NCCL communicator's device)");
  }
  // Pack: device span -> pinned image -> MPI_Pack -> pinned packed -> device scratch.
  MCRP_TRY(device::acquire(device::BufferKind::device, device, packed_offset, scratch_));
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, span_.bytes(), host_span_));
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, packed_offset, host_packed_));
  data = scratch_.data();
  if (span_.bytes() == 0) return {};
  // The image comes off on a copy stream of the buffer's device, not on `stream`: on an NCCL
  // communicator's stream this wait would also wait for the NCCL work launched before, which
  // needs the peers, and a nonblocking call must return without them.
  const int image_device = where.kind == device::MemoryKind::device ? where.device : std::max(device, 0);
  cudaStream_t image_stream = nullptr;
  {
    device::DeviceGuard on_device(image_device);  // the wait's event belongs to the stream's device
    MCRP_TRY(device::copy_stream(image_device, &image_stream));
    MCRP_TRY(device::copy_async(host_span_.data(), side.base + span_.lo, span_.bytes(), image_stream,
                                "cudaMemcpyAsync (pack)"));
    MCRP_TRY(device::wait_stream(image_stream, progress));
  }
  if (!side.read) return {};  // an output-only side needs the image (for its holes), not packed input
  MCRP_TRY(pack_blocks(side, span_base(host_span_.data(), span_.lo), host_packed_.data(), packed_offset, false));
  if (host_packed_.pageable()) {
    // A copy from pageable memory may wait for the work issued before it on its stream (CUDA
    // stages it through memory of its own), and on `stream` that is the NCCL work that needs the
    // peers: made on the image's stream instead and waited for here, so scratch is filled before
    // `stream` reaches this call's launch.
    device::DeviceGuard on_device(image_device);
    MCRP_TRY(device::copy_async(scratch_.data(), host_packed_.data(), packed_offset, image_stream,
                                "cudaMemcpyAsync (pack)"));
    return device::wait_stream(image_stream, progress);
  }
  return device::copy_async(scratch_.data(), host_packed_.data(), packed_offset, stream, "cudaMemcpyAsync (pack)");
}

Status DeviceView::finish(const BufferSide& side, cudaStream_t stream, device::ProgressHook& progress,
                          std::size_t delivered) {
  if (!finishes(side)) return {};
  if (relocated_) {
    // A contiguous side: its data is the span, and what was delivered its first bytes.
    MCRP_TRY(device::copy_async(side.base + span_.lo, scratch_.data(), std::min(delivered, span_.bytes()), stream,
                                "cudaMemcpyAsync (from the NCCL communicator's device)"));
    return device::wait_stream(stream, progress);
  }
  // Only what was delivered is unpacked (pack_blocks stops with it): whole blocks would write the
  // scratch's bytes beyond over the user's.
  const std::size_t arrived = std::min(delivered, end());
  MCRP_TRY(device::copy_async(host_packed_.data(), scratch_.data(), arrived, stream, "cudaMemcpyAsync (unpack)"));
  MCRP_TRY(device::wait_stream(stream, progress));
  MCRP_TRY(pack_blocks(side, span_base(host_span_.data(), span_.lo), host_packed_.data(), arrived, true));
  MCRP_TRY(device::copy_async(side.base + span_.lo, host_span_.data(), span_.bytes(), stream, "cudaMemcpyAsync (unpack)"));
  return device::wait_stream(stream, progress);
}

}  // namespace mcrp
