// A buffer side as NCCL needs it: plain bytes on the NCCL communicator's device with each block at a
// known offset. Contiguous datatypes on that device are used in place. Other datatypes (a rank may
// legally use a strided type where its peers use a contiguous one) are packed through host memory
// into device scratch and unpacked after; a contiguous side in host memory or on another device (a
// rank may mix them in one call, or use another GPU than the communicator's first call did) is
// copied into device scratch and back. Either way every rank still takes the NCCL path (rule 1),
// and no rank fails a check its peers pass.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/wait.h"
#include "runtime/buffer.h"

namespace mcrp {

class DeviceView {
 public:
  char* data = nullptr;
  // Block i of the side: its byte offset from data, and its byte length. Derived from the side's
  // blocks (which must outlive the view) rather than copied, so a call builds no lists.
  std::size_t offset(std::size_t i) const {
    return packed_ ? packed_offsets_[i] : static_cast<std::size_t>((*blocks_)[i].displacement * extent_);
  }
  std::size_t bytes(std::size_t i) const { return static_cast<std::size_t>((*blocks_)[i].count * size_); }
  std::size_t blocks() const { return blocks_ == nullptr ? 0 : blocks_->size(); }

  // Builds the view on `device` (-1: wherever the memory is; only packing then); packs
  // (synchronously, keeping MPI progressing) when the datatype is not contiguous, and relocates
  // (asynchronously, on `stream`) when the memory is elsewhere. `base_memory`, when given, is where
  // side.base already was found to be (the router located it): no second driver query for it.
  Status prepare(const BufferSide& side, const TypeInfo& type, int device, cudaStream_t stream,
                 device::ProgressHook& progress, const device::PointerInfo* base_memory = nullptr);
  // Whether finish has copies to make: a written side that was packed or relocated.
  bool finishes(const BufferSide& side) const { return side.written && span_.bytes() > 0 && (relocated_ || packed_); }
  // Once the work on the view's bytes has completed (or is earlier on `stream`): unpacks or copies a
  // written side back into the user's buffer, on `stream`, and waits for it. Only the first
  // `delivered` bytes of the view's data are (a receive of a shorter message, whose last datatype
  // unit it may fill only partly): the rest of the user's buffer keeps what it held.
  Status finish(const BufferSide& side, cudaStream_t stream, device::ProgressHook& progress,
                std::size_t delivered = kAllDelivered);
  static constexpr std::size_t kAllDelivered = ~std::size_t{0};

  std::size_t end() const;  // one past the last byte any block covers
  // The same blocks at `data` (a device copy of this view's bytes).
  void share_blocks(const DeviceView& other);

 private:
  const BlockList* blocks_ = nullptr;  // null: not significant
  MPI_Count size_ = 0;
  MPI_Aint extent_ = 0;
  std::vector<std::size_t> packed_offsets_;  // packed blocks follow each other
  bool packed_ = false;
  bool relocated_ = false;
  Span span_;
  device::Buffer scratch_;     // device, packed blocks
  device::Buffer host_span_;   // pinned image of the user's span
  device::Buffer host_packed_; // pinned packed bytes
};

}  // namespace mcrp
