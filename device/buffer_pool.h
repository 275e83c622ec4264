// Reusable pinned-host and device scratch buffers. cudaMallocHost and cudaMalloc cost milliseconds
// and synchronize the device, so staging and packing draw blocks from per-kind free lists bucketed
// by powers of two and return them when the owning Buffer goes out of scope.
#pragma once
#include <cstddef>

#include "device/status.h"

namespace mcrp::device {

enum class BufferKind { pinned_host, device };

class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  friend Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out);
  void release();

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  BufferKind kind_ = BufferKind::pinned_host;
  int device_ = -1;
};

// Hands out a buffer of at least `bytes` (device buffers on `device`). A zero-byte request
// succeeds with a null buffer.
Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out);

// Frees every cached block; called at MPI_Finalize, when no Buffer may be alive any more.
void release_cached_buffers();

}  // namespace mcrp::device
