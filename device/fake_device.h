// The fake device (testing only): with MCRPMPI_FAKE_DEVICE=1 the library behaves as if a GPU were
// present, and memory handed out by mcrpmpi_fake_device_alloc() counts as device memory. Copies are
// plain memcpy, streams and events are tokens that are always complete, and NCCL is not loaded unless
// MCRPMPI_NCCL_LIBRARY names one (the test suite's fake NCCL, tests/fake_nccl, which works on host
// memory); without it every device-buffer call takes the staged path (or the one-rank copy). That lets a machine
// without a GPU (CI) run the library's device-buffer code -- classification, routing, staging,
// request machinery -- with host memory standing in for the device's.
//
// What it cannot show: asynchrony of copies (a fake copy is done when issued), the real NCCL, and
// anything about real device pointers.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mcrp::device {

// MCRPMPI_FAKE_DEVICE=1 (and not MCRPMPI_DISABLE_CUDA); read once.
bool fake_device();

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
}
