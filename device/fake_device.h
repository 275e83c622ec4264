// The fake device (testing only): with MCRPMPI_FAKE_DEVICE=1 the library behaves as if a GPU were
// present, and memory handed out by mcrpmpi_fake_device_alloc() counts as device memory. Copies are
// plain memcpy, streams and events are tokens that are always complete, and NCCL is not loaded unless
// MCRPMPI_NCCL_LIBRARY names one (the test suite's fake NCCL, tests/fake_nccl, which works on host
// memory); without it every device-buffer call takes the staged path (or the one-rank copy). That lets a machine
// without a GPU (CI) run the library's device-buffer code -- classification, routing, staging,
// request machinery -- with host memory standing in for the device's.
//
// What it cannot show: the real NCCL, and anything about real device pointers. Asynchrony of copies
// it shows only with MCRPMPI_FAKE_DEVICE=async (below); otherwise a fake copy is done when issued.
// NCCL work that outlives its launch, as a kernel does, it shows only with a fake NCCL run with
// MCRPMPI_FAKE_NCCL_LATE=1 (set_fake_stream_marks below): then each stream is its own token, events
// and copies on a stream come after the NCCL work launched on it before them, and a copy from or to
// pageable memory waits for that work on the calling thread.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

namespace mcrp::device {

// MCRPMPI_FAKE_DEVICE=1 or =async (and not MCRPMPI_DISABLE_CUDA); read once.
bool fake_device();

// MCRPMPI_FAKE_CUDA_AWARE_BASE=1 with the fake device on: the library treats the base MPI as one
// with CUDA support (runtime/base_mpi.h), so it hands device pointers to it. Fake device memory is
// host memory, so any base MPI can play that part: CPU CI then runs the library's paths for a
// CUDA-aware base, which no machine the project has offers (the GPU machine has no MPI of its own).
bool fake_cuda_aware_base();

// MCRPMPI_FAKE_DEVICE=async: copies behave as a GPU's do. A copy is not done when issued but
// queued, in issue order (one queue for the process: streams are not told apart, which orders more
// than CUDA would); an event recorded after it answers "not ready" to its first two queries and
// then runs the queue up to itself; freeing fake device or pinned memory runs the whole queue first,
// as cudaFree synchronizes, and so does the fake NCCL at each launch (stream order before NCCL's
// work; mcrpmpi_fake_device_synchronize). Host code that reads a pinned image, or returns a buffer,
// before the copy's completion was observed then sees stale bytes, as it would on a GPU; a wait
// that polls library progress while a copy is pending runs that progress, as on a GPU.
namespace fake_detail {
extern const bool g_async;  // read once, when the library is loaded
extern std::atomic<bool> g_late_kernels;   // set_fake_stream_marks has run
extern std::atomic<bool> g_pageable_waits; // set_fake_stream_wait has run
extern std::atomic<bool> g_context_gated;  // set_fake_context_gate has run
void enter_context();
void leave_context();
}
inline bool fake_device_async() { return fake_detail::g_async; }
// Runs `copy` now, or (async) queues it; with late kernels, a copy on a stream whose NCCL work is
// not done runs after that work, as stream order has it (fake_run_after_kernels). A template, so the
// default mode builds no std::function (an allocation per copy, which cost.device_calls would count).
void fake_enqueue(std::function<void()> copy);
bool fake_run_after_kernels(cudaStream_t stream, std::function<void()>& copy);  // false: nothing to wait for
template <class Copy>
void fake_copy(cudaStream_t stream, Copy&& copy) {
  if (stream != nullptr && fake_detail::g_late_kernels.load(std::memory_order_acquire)) {
    std::function<void()> later(std::forward<Copy>(copy));
    if (!fake_run_after_kernels(stream, later)) fake_copy(nullptr, std::move(later));
    return;
  }
  if (fake_device_async()) {
    fake_enqueue(std::function<void()>(std::forward<Copy>(copy)));
  } else {
    copy();
  }
}
// Tracked events, made while fake_events_tracked(): in async mode a queue position and a countdown;
// with a fake NCCL whose kernels run late (set_fake_stream_marks), the mark of the NCCL work launched
// on the stream it was recorded on. Other events are tokens that are always complete
// (device/handles.cpp).
inline bool fake_events_tracked() {
  return fake_device_async() || fake_detail::g_late_kernels.load(std::memory_order_acquire);
}
cudaEvent_t fake_event_create();
void fake_event_destroy(cudaEvent_t event);
void fake_event_record(cudaEvent_t event, cudaStream_t stream);
bool fake_event_query(cudaEvent_t event);
// Runs every queued copy.
void fake_synchronize();
// The whole device's synchronization, as cudaFree and cudaFreeHost make it (and, the library
// assumes, cudaMallocHost: device/quiet_work.h): every queued copy, and every NCCL kernel in flight
// through the hook a fake NCCL installs (its device model, tests/fake_nccl/device_model.h: it keeps
// NCCL launches out until then, as the context's lock does). Without a hook, the copies only.
void fake_synchronize_device();
void set_fake_kernel_wait(void (*wait_for_kernels)());
// A copy with an end in pageable host memory on `stream`: CUDA may make it wait for the work issued
// before it on that stream, which on an NCCL communicator's stream is NCCL work (a fake NCCL plays
// it through the hook it installs; the staging pool's pageable stand-ins are the only pageable
// memory the library copies). Streams are told apart here: each fake stream is its own token.
void fake_pageable_copy_waits_hooked(const void* to, const void* from, cudaStream_t stream);
inline void fake_pageable_copy_waits(const void* to, const void* from, cudaStream_t stream) {
  if (fake_detail::g_pageable_waits.load(std::memory_order_acquire)) fake_pageable_copy_waits_hooked(to, from, stream);
}
void set_fake_stream_wait(void (*wait_for_stream)(cudaStream_t));
// Every CUDA call takes the context's lock, which a device synchronization (cudaFree) holds until
// the kernels in flight are done: an event record made meanwhile waits, as cuEventRecord did behind
// another thread's cudaFree on the H200 (p2p/engine.cpp, the acceptance). A fake NCCL plays it
// through the pair it installs (its device model's launch gate); without one, records never wait.
void set_fake_context_gate(void (*enter)(), void (*leave)());
// Held for the length of such a call. Inline: without a gate (no fake NCCL) one load and a branch.
class FakeCudaCall {
 public:
  FakeCudaCall() : gated_(fake_detail::g_context_gated.load(std::memory_order_acquire)) {
    if (gated_) fake_detail::enter_context();
  }
  ~FakeCudaCall() {
    if (gated_) fake_detail::leave_context();
  }
  FakeCudaCall(const FakeCudaCall&) = delete;
  FakeCudaCall& operator=(const FakeCudaCall&) = delete;

 private:
  bool gated_;
};
// A fake NCCL whose launches return before their work is done (its MCRPMPI_FAKE_NCCL_LATE) gives
// each stream's NCCL work a mark: events recorded from then on complete when the work before their
// mark is done, and fake_stream_busy reports a stream whose work is not.
void set_fake_stream_marks(std::uint64_t (*mark)(cudaStream_t), int (*reached)(cudaStream_t, std::uint64_t),
                           int (*run_after)(cudaStream_t, void (*)(void*), void*));
bool fake_stream_busy(cudaStream_t stream);

// The application's legacy default stream, as tests use it (any fake mode): a write a test queues
// there (mcrpmpi_fake_device_legacy_write, as a kernel or cudaMemcpyAsync on the default stream)
// runs when the library orders one of its streams after the legacy stream (fake_order_after_legacy:
// the write then comes before that stream's later copies, queued or run now as any fake copy), when
// the test synchronizes that stream (mcrpmpi_fake_device_legacy_synchronize, as a cudaMemcpy would),
// or at a free. A library path that touches a user's buffer without ordering first reads stale
// bytes, or is overwritten later, as on a GPU now that the library's streams are non-blocking.
void fake_legacy_write(void* to, const void* from, std::size_t bytes);
void fake_order_after_legacy();
void fake_legacy_synchronize();

// Fake device memory: host memory registered as device memory of ordinal 0. Like cudaMalloc's, it
// is never in the places device::in_lasting_host_memory knows as host (the brk heap, a stack, the
// program's data): its own mapping, or under AddressSanitizer the sanitizer's heap, which is
// mapped too and keeps its redzones. So memory-kind detection on the fake device takes the path it
// takes with CUDA: that check first, then the lookup that stands for the driver's.
void* fake_allocate(std::size_t bytes);
void fake_release(void* pointer);
bool fake_contains(const void* pointer);
// The fake allocation holding `pointer`: its start and its size as requested (at least 1 byte).
bool fake_range(const void* pointer, std::uintptr_t* start, std::size_t* bytes);

}  // namespace mcrp::device

// Exported for test programs, found with dlsym so that they also run without the library. Both
// return null / do nothing unless the fake device is on. The free synchronizes the device first, as
// cudaFree does (fake_synchronize_device).
extern "C" {
__attribute__((visibility("default"))) void* mcrpmpi_fake_device_alloc(std::size_t bytes);
__attribute__((visibility("default"))) void mcrpmpi_fake_device_free(void* pointer);
// The fake NCCL calls it at each launch (found with dlsym): copies issued before are done.
__attribute__((visibility("default"))) void mcrpmpi_fake_device_synchronize();
// Tests: `bytes` from `from` (read now) to be written at `to` on the fake legacy default stream;
// and that stream synchronized (see fake_order_after_legacy). Do nothing unless the fake device is on.
__attribute__((visibility("default"))) void mcrpmpi_fake_device_legacy_write(void* to, const void* from,
                                                                             std::size_t bytes);
__attribute__((visibility("default"))) void mcrpmpi_fake_device_legacy_synchronize();
}
