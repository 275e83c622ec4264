#include "device/buffer_pool.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "device/background_free.h"
#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"
#include "env/byte_count.h"

namespace mcrp::device {
namespace {

// Idle blocks of one kind and device, by capacity: shelf k holds blocks of 2^k bytes. Capacities
// are powers of two, so finding a block is two indexings instead of a search (a staged call takes
// and returns two blocks, issue 15's per-call cost).
using Shelves = std::array<std::vector<char*>, 64>;

struct Pool {
  std::mutex mutex;
  Shelves pinned;                      // pinned host blocks (no device)
  std::vector<Shelves> device_blocks;  // by device ordinal + 1 (-1: the device current then), grown on demand
  PoolUsage usage[2];                  // by BufferKind

  std::vector<char*>& shelf(BufferKind kind, int device, std::size_t capacity) {
    const auto k = static_cast<std::size_t>(__builtin_ctzll(capacity));
    if (kind == BufferKind::pinned_host) return pinned[k];
    const auto slot = static_cast<std::size_t>(device < 0 ? 0 : device + 1);
    if (slot >= device_blocks.size()) device_blocks.resize(slot + 1);
    return device_blocks[slot][k];
  }
};

// A pool limit from the environment (env/byte_count.h syntax); a bad value is reported and the
// default kept. Read once per process, so each rank reports its own.
std::size_t limit_from_env(const char* name, std::size_t fallback) {
  const env::ByteCountSetting setting = env::byte_count_from_env(name, std::numeric_limits<std::size_t>::max());
  if (!setting.problem.empty()) std::fprintf(stderr, "mcrpmpi: %s; using %zu\n", setting.problem.c_str(), fallback);
  return setting.bytes ? static_cast<std::size_t>(*setting.bytes) : fallback;
}

PoolUsage& usage_of(Pool& p, BufferKind kind) { return p.usage[kind == BufferKind::device ? 1 : 0]; }

Pool& pool() {
  static Pool* instance = [] {  // never destroyed: buffers may be released during exit
    auto* created = new Pool;
    usage_of(*created, BufferKind::pinned_host).limit = limit_from_env("MCRPMPI_PINNED_POOL_LIMIT", std::size_t{256} << 20);
    usage_of(*created, BufferKind::device).limit = limit_from_env("MCRPMPI_DEVICE_POOL_LIMIT", std::size_t{512} << 20);
    return created;
  }();
  return *instance;
}

// How often device work was given up (note_abandoned_work).
std::atomic<std::uint64_t> g_abandoned{0};

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
    if (kind == BufferKind::pinned_host) {
      fake_synchronize();  // as cudaFreeHost: no queued copy still writes the block
      std::free(block);
    } else {
      fake_release(block);
    }
  } else if (kind == BufferKind::pinned_host) {
    cudaFreeHost(block);
  } else {
    DeviceGuard guard(device);
    cudaFree(block);
  }
}

// A block past the pool's limit: freed on the background thread (device/background_free.h).
void free_in_background(BufferKind kind, int device, char* block, std::size_t capacity) {
  free_later([kind, device, block, capacity] {
    free_block(kind, device, block);
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    usage_of(p, kind).freeing -= capacity;
  });
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
    abandoned_before_ = other.abandoned_before_;
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (data_ == nullptr) return;
  // Abandoned work handed out before may still use the block: not for reuse (see note_abandoned_work).
  const bool reusable = g_abandoned.load(std::memory_order_acquire) == abandoned_before_;
  bool keep = false;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    PoolUsage& usage = usage_of(p, kind_);
    usage.in_use -= capacity_;
    keep = reusable && usage.cached + capacity_ <= usage.limit;
    if (keep) {
      usage.cached += capacity_;
      p.shelf(kind_, device_, capacity_).push_back(data_);
    } else {
      usage.freeing += capacity_;
    }
  }
  if (!keep) free_in_background(kind_, device_, data_, capacity_);
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
    PoolUsage& usage = usage_of(p, kind);
    std::vector<char*>& blocks = p.shelf(kind, device, capacity);
    if (!blocks.empty()) {
      block = blocks.back();
      blocks.pop_back();
      usage.cached -= capacity;
    }
    usage.in_use += capacity;  // counted before allocating, so the sum never goes negative
  }
  if (block == nullptr) {
    const Status allocated = allocate_block(kind, device, capacity, &block);
    if (!allocated.ok()) {
      Pool& p = pool();
      std::lock_guard<std::mutex> lock(p.mutex);
      usage_of(p, kind).in_use -= capacity;
      return allocated;
    }
  }
  out.abandoned_before_ = g_abandoned.load(std::memory_order_acquire);
  out.data_ = block;
  out.size_ = bytes;
  out.capacity_ = capacity;
  out.kind_ = kind;
  out.device_ = device;
  return {};
}

void note_abandoned_work() { g_abandoned.fetch_add(1, std::memory_order_acq_rel); }

void release_cached_buffers() {
  wait_for_frees();
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto empty = [](Shelves& shelves, BufferKind kind, int device) {
    for (std::vector<char*>& blocks : shelves) {
      for (char* block : blocks) free_block(kind, device, block);
      blocks.clear();
    }
  };
  empty(p.pinned, BufferKind::pinned_host, -1);
  for (std::size_t slot = 0; slot < p.device_blocks.size(); ++slot) {
    empty(p.device_blocks[slot], BufferKind::device, static_cast<int>(slot) - 1);
  }
  for (PoolUsage& usage : p.usage) usage.cached = 0;
}

PoolUsage pool_usage(BufferKind kind) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return usage_of(p, kind);
}

}  // namespace mcrp::device

extern "C" void mcrpmpi_pool_bytes(int kind, std::size_t* in_use, std::size_t* cached, std::size_t* limit) {
  mcrp::device::wait_for_frees();
  const mcrp::device::PoolUsage usage =
      mcrp::device::pool_usage(kind == 1 ? mcrp::device::BufferKind::device : mcrp::device::BufferKind::pinned_host);
  if (in_use != nullptr) *in_use = usage.in_use;
  if (cached != nullptr) *cached = usage.cached;
  if (limit != nullptr) *limit = usage.limit;
}
