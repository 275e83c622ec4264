#include "device/fake_device.h"

#include "device/buffer_pool.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace mcrp::device {
namespace {

bool flag_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

// Registered ranges, keyed by start address.
struct Ranges {
  std::mutex mutex;
  std::map<std::uintptr_t, std::size_t> by_start;
  // by_start's size, read without the lock: a program holding no fake device memory (a host-only
  // one, as a GPU machine's host calls are measured) pays one load per lookup, as with real CUDA.
  std::atomic<std::size_t> live{0};
};

Ranges& ranges() {
  static Ranges* instance = new Ranges;  // never destroyed: buffers may be released during exit
  return *instance;
}

// The async mode's copies, in issue order; `done` counts those run, `issued` those queued.
struct CopyQueue {
  std::mutex mutex;
  std::deque<std::function<void()>> pending;
  std::uint64_t issued = 0;
  std::uint64_t done = 0;

  void run_through(std::uint64_t position) {
    std::lock_guard<std::mutex> lock(mutex);
    while (done < position && !pending.empty()) {
      pending.front()();
      pending.pop_front();
      ++done;
    }
  }
};

CopyQueue& copy_queue() {
  static CopyQueue* instance = new CopyQueue;  // never destroyed, as ranges()
  return *instance;
}

// Writes queued on the application's legacy default stream, in issue order. `outstanding` is read
// without the lock: ordering after an idle legacy stream costs one load, as with real CUDA.
struct LegacyStream {
  std::mutex mutex;  // guards `pending`
  // Held while taken writes run, so that a flush returns only once every write queued before it is
  // done (or, with asynchronous copies, queued ahead of later copies), also when another thread
  // took them: a flush that found the queue emptied by a thread still running its writes returned
  // at once, and the library's copy that followed was overwritten by the late write (the helper
  // thread of runtime/progress_thread.h starting a transfer beside the program's thread).
  std::mutex flushing;
  std::deque<std::function<void()>> pending;
  std::atomic<std::size_t> outstanding{0};  // writes queued or still running

  void push(std::function<void()> write) {
    std::lock_guard<std::mutex> lock(mutex);
    pending.push_back(std::move(write));
    outstanding.fetch_add(1, std::memory_order_acq_rel);
  }

  template <class Run>
  void flush(Run run) {
    if (outstanding.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> serial(flushing);
    std::deque<std::function<void()>> writes;
    {
      std::lock_guard<std::mutex> lock(mutex);
      writes = std::exchange(pending, {});
    }
    for (std::function<void()>& write : writes) run(write);
    outstanding.fetch_sub(writes.size(), std::memory_order_acq_rel);
  }
};

LegacyStream& legacy_stream() {
  static LegacyStream* instance = new LegacyStream;  // never destroyed, as ranges()
  return *instance;
}

// A tracked event. Async copies: the queue position it was recorded at, and the queries still to
// answer "not ready". Late kernels: the stream it was recorded on and that stream's NCCL mark then.
struct FakeEvent {
  std::uint64_t position = 0;
  int not_ready = 0;
  cudaStream_t stream = nullptr;
  std::uint64_t mark = 0;
};
constexpr int kNotReadyQueries = 2;

// A late-kernel fake NCCL's marks (set_fake_stream_marks); both null until it installs them.
std::atomic<std::uint64_t (*)(cudaStream_t)> g_stream_mark{nullptr};
std::atomic<int (*)(cudaStream_t, std::uint64_t)> g_stream_reached{nullptr};
std::atomic<int (*)(cudaStream_t, void (*)(void*), void*)> g_run_after{nullptr};

}  // namespace

bool fake_device() {
  static const bool on = flag_set("MCRPMPI_FAKE_DEVICE") && !flag_set("MCRPMPI_DISABLE_CUDA");
  return on;
}

bool fake_cuda_aware_base() {
  static const bool on = fake_device() && flag_set("MCRPMPI_FAKE_CUDA_AWARE_BASE");
  return on;
}

namespace fake_detail {
std::atomic<bool> g_late_kernels{false};
std::atomic<bool> g_pageable_waits{false};
const bool g_async = [] {
  const char* value = std::getenv("MCRPMPI_FAKE_DEVICE");
  return fake_device() && value != nullptr && std::strcmp(value, "async") == 0;
}();
}  // namespace fake_detail

void fake_enqueue(std::function<void()> copy) {
  CopyQueue& q = copy_queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  q.pending.push_back(std::move(copy));
  ++q.issued;
}

cudaEvent_t fake_event_create() { return reinterpret_cast<cudaEvent_t>(new FakeEvent); }

void fake_event_destroy(cudaEvent_t event) { delete reinterpret_cast<FakeEvent*>(event); }

namespace {
std::atomic<void (*)()> g_context_enter{nullptr};
std::atomic<void (*)()> g_context_leave{nullptr};
}  // namespace

namespace fake_detail {
std::atomic<bool> g_context_gated{false};
void enter_context() { g_context_enter.load(std::memory_order_acquire)(); }
void leave_context() { g_context_leave.load(std::memory_order_acquire)(); }
}  // namespace fake_detail

void set_fake_context_gate(void (*enter)(), void (*leave)()) {
  g_context_enter.store(enter, std::memory_order_release);
  g_context_leave.store(leave, std::memory_order_release);
  fake_detail::g_context_gated.store(true, std::memory_order_release);
}

void fake_event_record(cudaEvent_t event, cudaStream_t stream) {
  auto* fake = reinterpret_cast<FakeEvent*>(event);
  if (std::uint64_t (*mark)(cudaStream_t) = g_stream_mark.load(std::memory_order_acquire)) {
    fake->stream = stream;
    fake->mark = mark(stream);
  }
  if (!fake_device_async()) return;
  CopyQueue& q = copy_queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  fake->position = q.issued;
  fake->not_ready = kNotReadyQueries;
}

namespace {

// The async copies before the event: run once the countdown is over.
bool copies_done(FakeEvent* fake) {
  CopyQueue& q = copy_queue();
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (q.done >= fake->position) return true;
    if (fake->not_ready > 0) {
      --fake->not_ready;
      return false;
    }
  }
  q.run_through(fake->position);
  return true;
}

// The late-kernel NCCL work before the event.
bool kernels_done(const FakeEvent* fake) {
  int (*reached)(cudaStream_t, std::uint64_t) = g_stream_reached.load(std::memory_order_acquire);
  return reached == nullptr || fake->mark == 0 || reached(fake->stream, fake->mark) != 0;
}

}  // namespace

bool fake_event_query(cudaEvent_t event) {
  auto* fake = reinterpret_cast<FakeEvent*>(event);
  if (!kernels_done(fake)) return false;
  return !fake_device_async() || copies_done(fake);
}

void fake_synchronize() {
  if (fake_device_async()) copy_queue().run_through(~std::uint64_t{0});
}

namespace {
std::atomic<void (*)()> g_kernel_wait{nullptr};
}  // namespace

void set_fake_kernel_wait(void (*wait_for_kernels)()) { g_kernel_wait.store(wait_for_kernels, std::memory_order_release); }

void fake_synchronize_device() {
  fake_synchronize();
  if (void (*wait_for_kernels)() = g_kernel_wait.load(std::memory_order_acquire)) wait_for_kernels();
}

namespace {
std::atomic<void (*)(cudaStream_t)> g_stream_wait{nullptr};
}  // namespace

void set_fake_stream_wait(void (*wait_for_stream)(cudaStream_t)) {
  g_stream_wait.store(wait_for_stream, std::memory_order_release);
  fake_detail::g_pageable_waits.store(wait_for_stream != nullptr, std::memory_order_release);
}

void set_fake_stream_marks(std::uint64_t (*mark)(cudaStream_t), int (*reached)(cudaStream_t, std::uint64_t),
                           int (*run_after)(cudaStream_t, void (*)(void*), void*)) {
  g_stream_reached.store(reached, std::memory_order_release);
  g_run_after.store(run_after, std::memory_order_release);
  g_stream_mark.store(mark, std::memory_order_release);
  fake_detail::g_late_kernels.store(true, std::memory_order_release);
}

bool fake_run_after_kernels(cudaStream_t stream, std::function<void()>& copy) {
  auto* queued = new std::function<void()>(std::move(copy));
  auto run = [](void* arg) {
    auto* work = static_cast<std::function<void()>*>(arg);
    (*work)();
    delete work;
  };
  if (g_run_after.load(std::memory_order_acquire)(stream, run, queued) != 0) return true;
  copy = std::move(*queued);  // nothing in flight there: the caller runs it as any copy
  delete queued;
  return false;
}

bool fake_stream_busy(cudaStream_t stream) {
  std::uint64_t (*mark)(cudaStream_t) = g_stream_mark.load(std::memory_order_acquire);
  if (mark == nullptr) return false;
  const std::uint64_t now = mark(stream);
  return now != 0 && g_stream_reached.load(std::memory_order_acquire)(stream, now) == 0;
}

void fake_pageable_copy_waits_hooked(const void* to, const void* from, cudaStream_t stream) {
  if (is_pageable_stand_in(to) || is_pageable_stand_in(from)) g_stream_wait.load(std::memory_order_acquire)(stream);
}

void fake_order_after_legacy() {
  legacy_stream().flush([](std::function<void()>& write) { fake_copy(nullptr, std::move(write)); });
}

void fake_legacy_write(void* to, const void* from, std::size_t bytes) {
  if (bytes == 0) return;
  std::vector<char> values(static_cast<const char*>(from), static_cast<const char*>(from) + bytes);
  legacy_stream().push([to, values = std::move(values)] { std::memcpy(to, values.data(), values.size()); });
}

void fake_legacy_synchronize() {
  legacy_stream().flush([](std::function<void()>& write) { write(); });
}

// AddressSanitizer's heap is mapped apart from the brk heap already, and keeps its redzones. GCC
// says it is on with __SANITIZE_ADDRESS__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define MCRP_FAKE_DEVICE_FROM_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MCRP_FAKE_DEVICE_FROM_MALLOC 1
#endif
#endif
#if defined(MCRP_FAKE_DEVICE_FROM_MALLOC)
constexpr bool kOwnMappings = false;
#else
constexpr bool kOwnMappings = true;
#endif

void* fake_allocate(std::size_t bytes) {
  if (!fake_device()) return nullptr;
  const std::size_t size = bytes == 0 ? 1 : bytes;
  void* pointer = nullptr;
  if (kOwnMappings) {
    pointer = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pointer == MAP_FAILED) return nullptr;
  } else {
    pointer = std::malloc(size);
  }
  if (pointer == nullptr) return nullptr;
  Ranges& r = ranges();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_start[reinterpret_cast<std::uintptr_t>(pointer)] = size;
  r.live.store(r.by_start.size(), std::memory_order_release);
  return pointer;
}

void fake_release(void* pointer) {
  if (pointer == nullptr) return;
  fake_synchronize();  // as cudaFree: no queued copy still writes the memory
  fake_legacy_synchronize();
  Ranges& r = ranges();
  std::size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_start.find(reinterpret_cast<std::uintptr_t>(pointer));
    if (it == r.by_start.end()) {
      // A double free or a pointer from elsewhere, as cudaFree would refuse it: a test's bug.
      std::fprintf(stderr, "mcrpmpi: fake device free of %p, which is not the start of fake device memory\n",
                   pointer);
      std::abort();
    }
    size = it->second;
    r.by_start.erase(it);
    r.live.store(r.by_start.size(), std::memory_order_release);
  }
  if (kOwnMappings) {
    munmap(pointer, size);
  } else {
    std::free(pointer);
  }
}

bool fake_range(const void* pointer, std::uintptr_t* start, std::size_t* bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  Ranges& r = ranges();
  if (r.live.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_start.upper_bound(address);
  if (it == r.by_start.begin()) return false;
  --it;
  if (address >= it->first + it->second) return false;
  *start = it->first;
  *bytes = it->second;
  return true;
}

bool fake_contains(const void* pointer) {
  std::uintptr_t start = 0;
  std::size_t bytes = 0;
  return fake_range(pointer, &start, &bytes);
}

}  // namespace mcrp::device

extern "C" void* mcrpmpi_fake_device_alloc(std::size_t bytes) { return mcrp::device::fake_allocate(bytes); }
// A test program's free is cudaFree's: it waits for all work on the device, NCCL kernels of every
// communicator included, as the library's own frees do (device/buffer_pool.cpp), so a test that
// frees while another thread's NCCL work waits for a peer deadlocks here as it would on a GPU.
extern "C" void mcrpmpi_fake_device_free(void* pointer) {
  if (pointer != nullptr) mcrp::device::fake_synchronize_device();
  mcrp::device::fake_release(pointer);
}
extern "C" void mcrpmpi_fake_device_synchronize() { mcrp::device::fake_synchronize(); }

extern "C" void mcrpmpi_fake_device_legacy_write(void* to, const void* from, std::size_t bytes) {
  if (mcrp::device::fake_device()) mcrp::device::fake_legacy_write(to, from, bytes);
}
extern "C" void mcrpmpi_fake_device_legacy_synchronize() {
  if (mcrp::device::fake_device()) mcrp::device::fake_legacy_synchronize();
}
