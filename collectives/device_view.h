// A buffer side as NCCL needs it: plain device bytes with each block at a known offset. Contiguous
// datatypes are used in place; other datatypes (a rank may legally use a strided type where its
// peers use a contiguous one) are packed through host memory into device scratch and unpacked after,
// so that every rank still takes the NCCL path (rule 1).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "collectives/layout.h"
#include "device/buffer_pool.h"
#include "device/wait.h"

namespace mcrp {

class DeviceView {
 public:
  char* data = nullptr;
  std::vector<std::size_t> offsets;  // byte offset of each block from data
  std::vector<std::size_t> bytes;    // byte length of each block

  // Builds the view; packs (synchronously, keeping MPI progressing) when the datatype is not contiguous.
  Status prepare(const BufferSide& side, const TypeInfo& type, int device, cudaStream_t stream,
                 device::ProgressHook& progress);
  // After the NCCL work on `stream`: unpacks a packed written side back into the user's buffer.
  Status finish(const BufferSide& side, cudaStream_t stream, device::ProgressHook& progress);

  std::size_t end() const;  // one past the last byte any block covers

 private:
  bool packed_ = false;
  Span span_;
  device::Buffer scratch_;     // device, packed blocks
  device::Buffer host_span_;   // pinned image of the user's span
  device::Buffer host_packed_; // pinned packed bytes
};

}  // namespace mcrp
