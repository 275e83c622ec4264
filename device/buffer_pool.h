// Reusable pinned-host and device scratch buffers. cudaMallocHost and cudaMalloc cost milliseconds,
// and frees wait for the whole device, so staging and packing draw blocks from per-kind free lists
// bucketed by powers of two and return them when the owning Buffer goes out of scope.
//
// The idle blocks kept per kind are bounded (MCRPMPI_PINNED_POOL_LIMIT, MCRPMPI_DEVICE_POOL_LIMIT,
// bytes, default 256 MiB and 512 MiB): when a returned block puts the cache past the limit, the
// idle blocks are freed until it is within -- first those of sizes the program no longer needs
// (beyond what each size had out at once lately), then the smallest block that covers the excess,
// else the largest, and again -- so a program whose message sizes wander keeps at most the limit
// cached, not its history, and a size it moves to is not starved by the sizes it left. The frees
// run on a background thread at a moment no NCCL work is in flight (device/quiet_work.h: cudaFree
// and cudaFreeHost wait for the whole device); until then the blocks stay reusable.
//
// New pinned blocks are allocated only at such a moment too (cudaMallocHost may wait likewise).
// A call that needs one while NCCL work is in flight gets a larger idle pinned block, else a
// pageable one (malloc: its copies are synchronous, but wait for no NCCL kernel), and the pool
// allocates a pinned block of that size at the next quiet moment for the calls after.
#pragma once
#include <cstddef>
#include <cstdint>

#include "device/status.h"
#include "device/wait.h"

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
  // A pinned request served by pageable memory (the gate being shut): a copy to or from it is
  // synchronous for the calling thread and may wait for the work before it on its stream.
  bool pageable() const { return pageable_; }

 private:
  friend Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out);
  void release();
  void release_pageable();

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  BufferKind kind_ = BufferKind::pinned_host;
  int device_ = -1;
  std::uint64_t abandoned_before_ = 0;  // note_abandoned_work's count when the block was handed out
  bool pageable_ = false;               // malloc'd stand-in for a pinned block (acquire), never pooled
};

// Hands out a buffer of at least `bytes` (device buffers on `device`). A zero-byte request
// succeeds with a null buffer.
Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out);

// Device work the library stopped waiting for (a failed wait, a stopped NCCL communicator, a failed
// nonblocking operation) may still read or write the blocks its call held, after the call has
// released them. From this call on, every block handed out before it is not reused when released
// but freed on the background thread, whose cudaFree or cudaFreeHost waits for the device first.
// Only failures call it; pooling is otherwise untouched (one atomic load per acquire and release).
void note_abandoned_work();

// Frees every cached block; called at MPI_Finalize, when no Buffer may be alive any more. The first
// waits as long as it takes; the second drives `progress` meanwhile and gives up when it fails (NCCL
// work that never ends keeps the frees from running: the blocks are then left to the process's exit).
void release_cached_buffers();
Status release_cached_buffers(ProgressHook& progress);

struct PoolUsage {
  std::size_t in_use = 0;  // bytes of blocks held by live Buffers
  std::size_t cached = 0;  // bytes of idle blocks kept for reuse
  std::size_t limit = 0;   // the bound on `cached` once the background thread has trimmed it
  std::size_t freeing = 0; // bytes handed to the background free, not yet freed
  std::size_t pageable_blocks = 0;  // pinned requests served by pageable memory, the gate being shut
};
PoolUsage pool_usage(BufferKind kind);

// Whether `pointer` lies in a pageable stand-in handed out now (the fake device's model of pageable
// copies asks; one atomic load while there is none).
bool is_pageable_stand_in(const void* pointer);

}  // namespace mcrp::device

// For test programs (found with dlsym, like the fake device's allocator): kind 0 is pinned host,
// 1 device memory. Fills what is non-null; waits for pending background frees first, so `cached`
// and `in_use` are what stays.
extern "C" __attribute__((visibility("default"))) void mcrpmpi_pool_bytes(int kind, std::size_t* in_use,
                                                                         std::size_t* cached, std::size_t* limit);

// How often note_abandoned_work was called; for test programs (dlsym), which check that an ordinary
// error such as MPI_ERR_TRUNCATE does not cost the pool its blocks.
extern "C" __attribute__((visibility("default"))) std::uint64_t mcrpmpi_abandoned_work_count();
