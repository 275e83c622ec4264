// Where a test keeps the buffers it hands to collectives. The same check runs on host memory (CPU
// tests) and on device memory (GPU tests, tests/gpu/device_memory.h): it fills and reads buffers
// only through upload/download, so the references stay on the host either way.
#pragma once
#include <cstddef>
#include <cstring>
#include <vector>

namespace mcrp_test {

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer) = 0;
  virtual void upload(void* to, const void* from, std::size_t bytes) = 0;
  virtual void download(void* to, const void* from, std::size_t bytes) = 0;
  virtual const char* name() const = 0;
};

class HostMemory final : public MemorySpace {
 public:
  void* allocate(std::size_t bytes) override { return ::operator new(bytes == 0 ? 1 : bytes); }
  void release(void* pointer) override { ::operator delete(pointer); }
  void upload(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  void download(void* to, const void* from, std::size_t bytes) override { copy(to, from, bytes); }
  const char* name() const override { return "host"; }

 private:
  static void copy(void* to, const void* from, std::size_t bytes) {
    if (bytes != 0) std::memcpy(to, from, bytes);
  }
};

// `count` elements of T in a memory space, released on destruction. Never empty (count 0 still
// gets a valid pointer), so count-0 calls pass a real buffer as users' code does.
template <class T>
class SpaceBuffer {
 public:
  SpaceBuffer(MemorySpace& space, std::size_t count)
      : space_(space), count_(count), data_(static_cast<T*>(space.allocate((count + 1) * sizeof(T)))) {}
  SpaceBuffer(MemorySpace& space, const std::vector<T>& values) : SpaceBuffer(space, values.size()) {
    upload(values);
  }
  ~SpaceBuffer() { space_.release(data_); }
  SpaceBuffer(const SpaceBuffer&) = delete;
  SpaceBuffer& operator=(const SpaceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const std::vector<T>& values) { space_.upload(data_, values.data(), values.size() * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> values(count_);
    space_.download(values.data(), data_, count_ * sizeof(T));
    return values;
  }

 private:
  MemorySpace& space_;
  std::size_t count_;
  T* data_;
};

}  // namespace mcrp_test
