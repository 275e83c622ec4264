#include "device/fake_device.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

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

}  // namespace

bool fake_device() {
  static const bool on = flag_set("MCRPMPI_FAKE_DEVICE") && !flag_set("MCRPMPI_DISABLE_CUDA");
  return on;
}

void* fake_allocate(std::size_t bytes) {
  if (!fake_device()) return nullptr;
  const std::size_t size = bytes == 0 ? 1 : bytes;
  void* pointer = std::malloc(size);
  if (pointer == nullptr) return nullptr;
  Ranges& r = ranges();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_start[reinterpret_cast<std::uintptr_t>(pointer)] = size;
  r.live.store(r.by_start.size(), std::memory_order_release);
  return pointer;
}

void fake_release(void* pointer) {
  if (pointer == nullptr) return;
  Ranges& r = ranges();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.by_start.erase(reinterpret_cast<std::uintptr_t>(pointer));
    r.live.store(r.by_start.size(), std::memory_order_release);
  }
  std::free(pointer);
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
extern "C" void mcrpmpi_fake_device_free(void* pointer) { mcrp::device::fake_release(pointer); }
