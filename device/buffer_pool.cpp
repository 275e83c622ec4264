#include "device/buffer_pool.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"
#include "device/quiet_work.h"
#include "env/byte_count.h"

namespace mcrp::device {
namespace {

// The blocks of one capacity, kind and device: the idle ones, and how many were out at once lately.
// A window ends each time no block of the kind is out (a round of the program's traffic); what a
// capacity needed at once in the current and the previous window is what a trim keeps for it
// before anything else (take_for_excess): blocks beyond that belong to sizes the program has left
// behind. While a trim is queued no window ends (the trim ends it, if nothing is out by then), so
// that the trim judges the windows the release that queued it saw: osu_bw's acknowledgement, a
// small block alone in a window after the data's, queues the trim, and had that window ended
// before the trim ran, the data's 4 MiB blocks would have looked unneeded. Ending windows at every
// trim instead made the 4 MiB blocks look unneeded while they came back one by one.
struct Shelf {
  std::vector<char*> idle;
  std::size_t out = 0;            // handed out now (pageable stand-ins of this capacity too)
  std::size_t peak = 0;           // most out at once in `window`
  std::size_t previous_peak = 0;  // ... in the window before it
  std::uint64_t window = 0;

  // Brings the peaks to window `now` of the kind (windows it saw no call in needed nothing). Only
  // count_out and the trim need it: a window starts with nothing out, so a return before the
  // shelf's first hand-out in it changes nothing.
  void enter(std::uint64_t now) {
    if (window == now) return;
    previous_peak = window + 1 == now ? peak : 0;
    peak = out;
    window = now;
  }
  void count_out(std::uint64_t now) {
    enter(now);
    peak = std::max(peak, ++out);
  }
  // Idle blocks beyond what the last two windows needed at once.
  std::size_t surplus() const {
    const std::size_t held = idle.size() + out, needed = std::max(peak, previous_peak);
    return held > needed ? std::min(held - needed, idle.size()) : 0;
  }
};

// Shelf k holds blocks of 2^k bytes. Capacities are powers of two, so finding a block is two
// indexings instead of a search (a staged call takes and returns two blocks, issue 15's per-call cost).
using Shelves = std::array<Shelf, 64>;

// The shelf of blocks of `capacity` bytes (a power of two).
std::size_t shelf_index(std::size_t capacity) { return static_cast<std::size_t>(__builtin_ctzll(capacity)); }

struct Pool {
  std::mutex mutex;
  Shelves pinned;                      // pinned host blocks (no device)
  std::vector<Shelves> device_blocks;  // by device ordinal + 1 (-1: the device current then), grown on demand
  PoolUsage usage[2];                  // by BufferKind
  bool trim_queued = false;            // a trim_to_limits waits on the background thread
  std::array<bool, 64> warming{};      // a pinned block of 2^k bytes is to be allocated at a quiet moment
  std::vector<std::pair<const char*, std::size_t>> pageable_live;  // stand-ins handed out: start, capacity
  std::uint64_t windows[2] = {0, 0};   // by BufferKind: windows ended (moments no block was out)

  std::uint64_t& window(BufferKind kind) { return windows[kind == BufferKind::device ? 1 : 0]; }
  Shelf& shelf(BufferKind kind, int device, std::size_t capacity) {
    const std::size_t k = shelf_index(capacity);
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

// Counts a block of `shelf` (`capacity` bytes) out: a hand-out, from the shelf or newly allocated.
void hand_out(Pool& p, BufferKind kind, Shelf& shelf, std::size_t capacity) {
  shelf.count_out(p.window(kind));
  usage_of(p, kind).in_use += capacity;
}

// Counts it back in.
void hand_back(Pool& p, BufferKind kind, Shelf& shelf, std::size_t capacity) {
  --shelf.out;
  usage_of(p, kind).in_use -= capacity;
}

// Ends the kind's window when nothing of it is out, unless a trim is queued (Shelf).
void maybe_end_window(Pool& p, BufferKind kind) {
  if (usage_of(p, kind).in_use == 0 && !p.trim_queued) ++p.window(kind);
}

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
// Pool::pageable_live's size, read without the lock.
std::atomic<std::size_t> g_pageable_live{0};

std::size_t bucket_capacity(std::size_t bytes) {
  std::size_t capacity = 256;
  while (capacity < bytes) capacity <<= 1;
  return capacity;
}

Status allocate_block(BufferKind kind, int device, std::size_t capacity, char** block) {
  void* raw = nullptr;
  if (fake_device()) {
    // As cudaMallocHost may (quiet_work.h): waits for all work on the device. cudaMalloc is not
    // modelled so: it was not seen to wait, and device blocks have no fallback.
    if (kind == BufferKind::pinned_host) fake_synchronize_device();
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
    fake_synchronize_device();  // as cudaFreeHost and cudaFree: waits for all work on the device
    if (kind == BufferKind::pinned_host) {
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

// An idle block taken off its shelf to be freed.
struct Taken {
  char* block;
  BufferKind kind;
  int device;
  std::size_t capacity;
};

// Takes one idle block of `shelves` off the pool (from `cached` to `freeing`) to free `excess` bytes,
// first from the capacities holding more than they needed lately (Shelf::surplus: sizes the program
// left behind; osu_bw from 1 to 4 MiB kept its 1 and 2 MiB blocks and freed 4 MiB ones until it
// was), then from any: the smallest block that covers the excess, else the largest (and the caller
// comes back for more); false when there is none. The smallest that covers it, so that a program
// whose working set sits right at the limit gives up a small block rather than one of the large
// ones it needs again next time: osu_bw's 64 messages of 4 MiB are 256 MiB of staging blocks, the
// pinned default, and with the largest freed first every iteration freed and allocated one of them
// again (cudaFreeHost waits for the whole device). Whatever is freed, one free usually suffices: each
// costs a device synchronization. Called with the pool's lock held.
bool take_for_excess(Pool& p, Shelves& shelves, BufferKind kind, int device, std::size_t excess, Taken* taken) {
  const auto choose = [&](bool surplus_only) {
    std::size_t chosen = shelves.size();
    for (std::size_t k = 0; k < shelves.size(); ++k) {
      shelves[k].enter(p.window(kind));
      if (surplus_only ? shelves[k].surplus() == 0 : shelves[k].idle.empty()) continue;
      chosen = k;  // ends as the largest such shelf unless one covers the excess first
      if ((std::size_t{1} << k) >= excess) break;
    }
    return chosen;
  };
  std::size_t chosen = choose(true);
  if (chosen == shelves.size()) chosen = choose(false);
  if (chosen == shelves.size()) return false;
  *taken = Taken{shelves[chosen].idle.back(), kind, device, std::size_t{1} << chosen};
  shelves[chosen].idle.pop_back();
  PoolUsage& usage = usage_of(p, kind);
  usage.cached -= taken->capacity;
  usage.freeing += taken->capacity;
  return true;
}

void free_taken(const std::vector<Taken>& taken) {
  for (const Taken& t : taken) free_block(t.kind, t.device, t.block);
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const Taken& t : taken) usage_of(p, t.kind).freeing -= t.capacity;
}

// A block that may not be reused (counted in `freeing`): freed on the background thread.
void free_in_background(BufferKind kind, int device, char* block, std::size_t capacity) {
  defer_until_quiet([taken = Taken{block, kind, device, capacity}] { free_taken({taken}); });
}

// Takes idle blocks off the shelves while `excess(usage)` says how many bytes that kind's cache must
// still lose (0: none). Called with the pool's lock held.
template <typename Excess>
std::vector<Taken> take_idle(Pool& p, Excess excess) {
  std::vector<Taken> taken;
  Taken t{};
  for (std::size_t over; (over = excess(usage_of(p, BufferKind::pinned_host))) > 0 &&
                         take_for_excess(p, p.pinned, BufferKind::pinned_host, -1, over, &t);) {
    taken.push_back(t);
  }
  for (std::size_t slot = 0; slot < p.device_blocks.size(); ++slot) {
    for (std::size_t over; (over = excess(usage_of(p, BufferKind::device))) > 0 &&
                           take_for_excess(p, p.device_blocks[slot], BufferKind::device, static_cast<int>(slot) - 1,
                                           over, &t);) {
      taken.push_back(t);
    }
  }
  return taken;
}

// Frees idle blocks until each kind's cache is within its limit. Queued by a release that put the
// cache over it; until it runs (at a quiet moment: quiet_work.h) the blocks stay reusable, so a
// cache over its limit lasts no longer than the NCCL work that keeps the gate shut, and a program
// that keeps NCCL busy reuses its blocks instead of piling up new ones.
void trim_to_limits() {
  std::vector<Taken> taken;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.trim_queued = false;
    taken = take_idle(p, [](const PoolUsage& usage) { return usage.cached > usage.limit ? usage.cached - usage.limit : 0; });
    maybe_end_window(p, BufferKind::pinned_host);  // the end a queued trim held back
    maybe_end_window(p, BufferKind::device);
  }
  free_taken(taken);
}

// Frees every idle block (MPI_Finalize).
void free_every_cached_block() {
  std::vector<Taken> taken;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    taken = take_idle(p, [](const PoolUsage&) { return std::numeric_limits<std::size_t>::max(); });
  }
  free_taken(taken);
}

// Takes an idle block of *capacity bytes off its shelf -- or, with `larger`, of the smallest capacity
// above it that has one, updating *capacity -- and counts it in use; null when there is none.
char* take_idle_block(BufferKind kind, int device, std::size_t* capacity, bool larger) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  std::size_t size = *capacity;
  Shelf* shelf = &p.shelf(kind, device, size);
  while (larger && shelf->idle.empty() && size < (std::size_t{1} << 62)) {
    size <<= 1;
    shelf = &p.shelf(kind, device, size);
  }
  if (shelf->idle.empty()) return nullptr;
  char* block = shelf->idle.back();
  shelf->idle.pop_back();
  usage_of(p, kind).cached -= size;
  hand_out(p, kind, *shelf, size);
  *capacity = size;
  return block;
}

// Allocates a pinned block of `capacity` bytes for the cache, if it fits within the limit; run at a
// quiet moment, after a call had to make do without one (new_block).
void warm(std::size_t capacity) {
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.warming[shelf_index(capacity)] = false;
    const PoolUsage& usage = usage_of(p, BufferKind::pinned_host);
    if (usage.cached + capacity > usage.limit || !p.shelf(BufferKind::pinned_host, -1, capacity).idle.empty()) return;
  }
  char* block = nullptr;
  if (!allocate_block(BufferKind::pinned_host, -1, capacity, &block).ok()) return;
  std::lock_guard<std::mutex> lock(p.mutex);
  usage_of(p, BufferKind::pinned_host).cached += capacity;
  p.shelf(BufferKind::pinned_host, -1, capacity).idle.push_back(block);
}

// Allocates a block and counts it in use.
Status allocate_in_use(BufferKind kind, int device, std::size_t capacity, char** block) {
  MCRP_TRY(allocate_block(kind, device, capacity, block));
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  hand_out(p, kind, p.shelf(kind, device, capacity), capacity);
  return {};
}

// A block for acquire when no idle one of its capacity is cached. Pinned memory is allocated only
// through the quiet gate (cudaMallocHost may wait for the whole device: quiet_work.h). While the gate
// is shut a larger idle block serves, else pageable memory: copies to and from it are synchronous
// for the calling thread but wait for nothing other than their own stream. A pinned block of that
// capacity is then allocated at the next quiet moment, so the calls after find one. Device blocks
// are allocated at once (cudaMalloc has no such fallback, and was not seen waiting).
Status new_block(BufferKind kind, int device, std::size_t* capacity, char** block, bool* pageable) {
  if (kind == BufferKind::device) return allocate_in_use(kind, device, *capacity, block);
  Status allocated;
  if (run_if_quiet([&] { allocated = allocate_in_use(kind, device, *capacity, block); })) return allocated;
  if ((*block = take_idle_block(kind, device, capacity, true)) != nullptr) return {};
  *block = static_cast<char*>(std::malloc(*capacity));
  if (*block == nullptr) return Status(MPI_ERR_NO_MEM, "out of host memory for a staging block");
  *pageable = true;
  bool queue_warm = false;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    hand_out(p, kind, p.shelf(kind, device, *capacity), *capacity);
    ++usage_of(p, kind).pageable_blocks;
    p.pageable_live.emplace_back(*block, *capacity);
    g_pageable_live.store(p.pageable_live.size(), std::memory_order_release);
    queue_warm = !std::exchange(p.warming[shelf_index(*capacity)], true);
  }
  if (queue_warm) defer_until_quiet([size = *capacity] { warm(size); });
  return {};
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
    pageable_ = std::exchange(other.pageable_, false);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

// A pageable stand-in is never pooled. CUDA has consumed such memory by the time a cudaMemcpyAsync
// to or from it returns (it copies through staging memory of its own), so it is freed at once; after
// abandoned work, through the background thread's device synchronization, for the fake device's
// queued copies (MCRPMPI_FAKE_DEVICE=async), which have no such staging.
void Buffer::release_pageable() {
  const bool abandoned = g_abandoned.load(std::memory_order_acquire) != abandoned_before_;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    hand_back(p, kind_, p.shelf(kind_, device_, capacity_), capacity_);
    maybe_end_window(p, kind_);
    auto& live = p.pageable_live;
    live.erase(std::find(live.begin(), live.end(), std::make_pair(static_cast<const char*>(data_), capacity_)));
    g_pageable_live.store(live.size(), std::memory_order_release);
  }
  if (abandoned && fake_device()) {
    defer_until_quiet([block = data_] {
      fake_synchronize_device();
      std::free(block);
    });
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = capacity_ = 0;
  pageable_ = false;
}

void Buffer::release() {
  if (data_ == nullptr) return;
  if (pageable_) {
    release_pageable();
    return;
  }
  // Abandoned work handed out before may still use the block: not for reuse (see note_abandoned_work).
  const bool reusable = g_abandoned.load(std::memory_order_acquire) == abandoned_before_;
  bool trim = false;
  {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    PoolUsage& usage = usage_of(p, kind_);
    Shelf& shelf = p.shelf(kind_, device_, capacity_);
    hand_back(p, kind_, shelf, capacity_);
    if (reusable) {
      usage.cached += capacity_;
      shelf.idle.push_back(data_);
      trim = usage.cached > usage.limit && !std::exchange(p.trim_queued, true);
    } else {
      usage.freeing += capacity_;
    }
    maybe_end_window(p, kind_);
  }
  if (!reusable) free_in_background(kind_, device_, data_, capacity_);
  if (trim) defer_until_quiet(trim_to_limits);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

Status acquire(BufferKind kind, int device, std::size_t bytes, Buffer& out) {
  out = Buffer();
  if (bytes == 0) return {};
  std::size_t capacity = bucket_capacity(bytes);
  if (kind == BufferKind::pinned_host) device = -1;
  char* block = take_idle_block(kind, device, &capacity, false);
  bool pageable = false;
  if (block == nullptr) MCRP_TRY(new_block(kind, device, &capacity, &block, &pageable));
  out.abandoned_before_ = g_abandoned.load(std::memory_order_acquire);
  out.data_ = block;
  out.size_ = bytes;
  out.capacity_ = capacity;
  out.kind_ = kind;
  out.device_ = device;
  out.pageable_ = pageable;
  return {};
}

void note_abandoned_work() { g_abandoned.fetch_add(1, std::memory_order_acq_rel); }

void release_cached_buffers() {
  defer_until_quiet(free_every_cached_block);
  wait_for_deferred();
}

Status release_cached_buffers(ProgressHook& progress) {
  if (run_if_quiet(free_every_cached_block)) return {};  // the usual case: nothing in flight any more
  defer_until_quiet(free_every_cached_block);
  return wait_for_deferred(progress);
}

PoolUsage pool_usage(BufferKind kind) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return usage_of(p, kind);
}

bool is_pageable_stand_in(const void* pointer) {
  if (g_pageable_live.load(std::memory_order_acquire) == 0) return false;
  const auto* at = static_cast<const char*>(pointer);
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const auto& [start, capacity] : p.pageable_live) {
    if (at >= start && at < start + capacity) return true;
  }
  return false;
}

}  // namespace mcrp::device

extern "C" void mcrpmpi_pool_bytes(int kind, std::size_t* in_use, std::size_t* cached, std::size_t* limit) {
  mcrp::device::wait_for_deferred();
  const mcrp::device::PoolUsage usage =
      mcrp::device::pool_usage(kind == 1 ? mcrp::device::BufferKind::device : mcrp::device::BufferKind::pinned_host);
  if (in_use != nullptr) *in_use = usage.in_use;
  if (cached != nullptr) *cached = usage.cached;
  if (limit != nullptr) *limit = usage.limit;
}

extern "C" std::uint64_t mcrpmpi_abandoned_work_count() {
  return mcrp::device::g_abandoned.load(std::memory_order_acquire);
}
