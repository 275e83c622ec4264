// Where a test keeps the buffers it hands to collectives. The same check runs on host memory (CPU
// tests) and on device memory (GPU tests, tests/gpu/device_memory.h): it fills and reads buffers
// only through upload/download, so the references stay on the host either way.
#pragma once
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
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

// Another space's memory, kept for reuse when released (in blocks of a power of two) and given
// back only when this object goes, as PyTorch's and CuPy's caching allocators do. A threaded
// program that frees device memory while its other threads communicate can hang on NCCL: the
// free synchronizes the device and holds CUDA's lock until every kernel in flight ends, one of
// them waiting for a peer whose own free blocks its matching launch (docs/routing.md, "Streams"). The
// fake device plays that with the fake NCCL. Threaded tests allocate through this instead.
class CachingSpace final : public MemorySpace {
 public:
  explicit CachingSpace(MemorySpace& inner) : inner_(inner) {}
  ~CachingSpace() override {
    for (auto& [bytes, pointer] : idle_) inner_.release(pointer);
  }
  CachingSpace(const CachingSpace&) = delete;
  CachingSpace& operator=(const CachingSpace&) = delete;

  void* allocate(std::size_t bytes) override {
    std::size_t block = 64;
    while (block < bytes) block *= 2;
    std::lock_guard<std::mutex> lock(mutex_);
    void* pointer = nullptr;
    if (auto idle = idle_.find(block); idle != idle_.end()) {
      pointer = idle->second;
      idle_.erase(idle);
    } else {
      pointer = inner_.allocate(block);
    }
    block_of_[pointer] = block;
    return pointer;
  }
  void release(void* pointer) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto block = block_of_.find(pointer);
    idle_.emplace(block->second, pointer);
    block_of_.erase(block);
  }
  void upload(void* to, const void* from, std::size_t bytes) override { inner_.upload(to, from, bytes); }
  void download(void* to, const void* from, std::size_t bytes) override { inner_.download(to, from, bytes); }
  const char* name() const override { return inner_.name(); }

 private:
  MemorySpace& inner_;
  std::mutex mutex_;
  std::multimap<std::size_t, void*> idle_;          // released blocks by size
  std::unordered_map<void*, std::size_t> block_of_;  // blocks in use
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
