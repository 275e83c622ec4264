// A memory space that puts guard bytes before and after every allocation of another space (host or
// fake device), so a test can prove that a call wrote nothing outside the buffers it was given:
// intact() reads every live allocation's guards back through the inner space.
#pragma once
#include <cstddef>
#include <map>

#include "tests/mpi/memory_space.h"

namespace mcrp_test {

class GuardedSpace final : public MemorySpace {
 public:
  static constexpr std::size_t kGuardBytes = 64;
  static constexpr unsigned char kGuardByte = 0xA5;

  explicit GuardedSpace(MemorySpace& inner) : inner_(inner) {}
  ~GuardedSpace() override;
  GuardedSpace(const GuardedSpace&) = delete;
  GuardedSpace& operator=(const GuardedSpace&) = delete;

  void* allocate(std::size_t bytes) override;
  void release(void* pointer) override;
  void upload(void* to, const void* from, std::size_t bytes) override { inner_.upload(to, from, bytes); }
  void download(void* to, const void* from, std::size_t bytes) override { inner_.download(to, from, bytes); }
  const char* name() const override { return inner_.name(); }

  // True when every live allocation's guards still hold kGuardByte.
  bool intact() const;

 private:
  bool guard_intact(const char* guard) const;

  MemorySpace& inner_;
  std::map<char*, std::size_t> live_;  // user pointer -> user bytes
};

}  // namespace mcrp_test
