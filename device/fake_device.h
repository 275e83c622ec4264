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
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

namespace mcrp::device {

// MCRPMPI_FAKE_DEVICE=1 or =async (and not MCRPMPI_DISABLE_CUDA); read once.
bool fake_device();

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
}
inline bool fake_device_async() { return fake_detail::g_async; }
// Runs `copy` now, or (async) queues it. A template, so the default mode builds no std::function
// (an allocation per copy, which cost.device_calls would count).
void fake_enqueue(std::function<void()> copy);
template <class Copy>
void fake_copy(Copy&& copy) {
  if (fake_device_async()) {
    fake_enqueue(std::function<void()>(std::forward<Copy>(copy)));
  } else {
    copy();
  }
}
// Async events: a queue position and a countdown (the default mode's events are tokens that are
// always complete, device/handles.cpp). Call these only when fake_device_async().
cudaEvent_t fake_event_create();
void fake_event_destroy(cudaEvent_t event);
void fake_event_record(cudaEvent_t event);
bool fake_event_query(cudaEvent_t event);
// Runs every queued copy.
void fake_synchronize();
// The whole device's synchronization, as cudaFree and cudaFreeHost make it (and, the library
// assumes, cudaMallocHost: device/quiet_work.h): every queued copy, and every NCCL kernel in flight
// through the hook a fake NCCL installs (its device model, tests/fake_nccl/device_model.h: it keeps
// NCCL launches out until then, as the context's lock does). Without a hook, the copies only.
void fake_synchronize_device();
void set_fake_kernel_wait(void (*wait_for_kernels)());

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

// Fake device memory: host memory registered as device memory of ordinal 0.
void* fake_allocate(std::size_t bytes);
void fake_release(void* pointer);
bool fake_contains(const void* pointer);
// The fake allocation holding `pointer`: its start and its size as requested (at least 1 byte).
bool fake_range(const void* pointer, std::uintptr_t* start, std::size_t* bytes);

}  // namespace mcrp::device

// Exported for test programs, found with dlsym so that they also run without the library. Both
// return null / do nothing unless the fake device is on.
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
