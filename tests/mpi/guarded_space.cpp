#include "tests/mpi/guarded_space.h"

#include <vector>

namespace mcrp_test {

GuardedSpace::~GuardedSpace() {
  while (!live_.empty()) release(live_.begin()->first);
}

void* GuardedSpace::allocate(std::size_t bytes) {
  char* block = static_cast<char*>(inner_.allocate(bytes + 2 * kGuardBytes));
  const std::vector<unsigned char> guard(kGuardBytes, kGuardByte);
  inner_.upload(block, guard.data(), kGuardBytes);
  inner_.upload(block + kGuardBytes + bytes, guard.data(), kGuardBytes);
  char* user = block + kGuardBytes;
  live_[user] = bytes;
  return user;
}

void GuardedSpace::release(void* pointer) {
  char* user = static_cast<char*>(pointer);
  live_.erase(user);
  inner_.release(user - kGuardBytes);
}

bool GuardedSpace::guard_intact(const char* guard) const {
  std::vector<unsigned char> got(kGuardBytes);
  inner_.download(got.data(), guard, kGuardBytes);
  for (unsigned char b : got) {
    if (b != kGuardByte) return false;
  }
  return true;
}

bool GuardedSpace::intact() const {
  for (const auto& [user, bytes] : live_) {
    if (!guard_intact(user - kGuardBytes) || !guard_intact(user + bytes)) return false;
  }
  return true;
}

}  // namespace mcrp_test
