#include "device/buffer_pool.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include <cstdlib>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"

namespace mcrp::device {
namespace {

// Free blocks keyed by (kind, device, capacity); capacity is a power of two.
using PoolKey = std::tuple<BufferKind, int, std::size_t>;

struct Pool {
  std::mutex mutex;
  std::map<PoolKey, std::vector<char*>> free_blocks;
};

Pool& pool() {
  static Pool* instance = new Pool;  // never destroyed: buffers may be released during exit
  return *instance;
}

std::size_t bucket_capacity(std::size_t bytes) {
  std::size_t capacity = 256;
  while (capacity < bytes) capacity <<= 1;
  return capacity;
}

Status allocate_block(BufferKind kind, int device, std::size_t capacity, char** block) {
  void* raw = nullptr;
  if (fake_device()) {
    raw = kind == BufferKind::pinned_host ? std::malloc(capacity) : fake_allocate(capacity);
    if (raw == nullptr) return Status(MPI_ERR_NO_MEM, "out of (fake device) memory");
  } else if (kind == BufferKind::pinned_host) {
    MCRP_TRY(cuda_status(cudaMallocHost(&raw, capacity), "cudaMallocHost"));
  } else {
    DeviceGuard guard(device);
    MCRP_TRY(cuda_status(cudaMalloc(&raw, capacity), "cudaMalloc"));
  }
  *block = static_cast<char*>(raw);
  return {};
}

void free_block(BufferKind kind, int device, char* block) {
  if (fake_device()) {
    if (kind == BufferKind::pinned_host) std::free(block);
    else fake_release(block);
  } else if (kind == BufferKind::pinned_host) {
    cudaFreeHost(block);
  } else {
    DeviceGuard guard(device);
    cudaFree(block);
  }
}

}  // namespace

Buffer::Buffer(Buffer&& other) noexcept { *this = std::move(other); }

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    kind_ = other.kind_;
    device_ = other.device_;
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (data_ == nullptr) return;
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.free_blocks[{kind_, device_, capacity_}].push_back(data_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out) {
  out = Buffer();
  if (bytes == 0) return {};
  const std::size_t capacity = bucket_capacity(bytes);
  if (kind == BufferKind::pinned_host) device = -1;
  char* block = nullptr;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    auto& blocks = p.free_blocks[{kind, device, capacity}];
    if (!blocks.empty()) {
      block = blocks.back();
      blocks.pop_back();
    }
  }
  if (block == nullptr) MCRP_TRY(allocate_block(kind, device, capacity, &block));
  out.data_ = block;
  out.size_ = bytes;
  out.capacity_ = capacity;
  out.kind_ = kind;
  out.device_ = device;
  return {};
}

void release_cached_buffers() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (auto& [key, blocks] : p.free_blocks) {
    for (char* block : blocks) free_block(std::get<0>(key), std::get<1>(key), block);
  }
  p.free_blocks.clear();
}

}  // namespace mcrp::device
