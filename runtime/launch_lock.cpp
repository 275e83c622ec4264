#include "runtime/launch_lock.h"

#include <chrono>
#include <thread>

namespace mcrp {

namespace launch_lock_detail {
std::mutex mutex;
std::atomic<pthread_t> holder{};
std::atomic<unsigned long> takings{0};
}  // namespace launch_lock_detail

LaunchLockWatch watch_launch_lock(int watch_ms) {
  using namespace launch_lock_detail;
  LaunchLockWatch watch;
  const unsigned long taking = takings.load(std::memory_order_relaxed);
  watch.holder = holder.load(std::memory_order_relaxed);
  if (watch.holder == pthread_t{}) return watch;
  std::this_thread::sleep_for(std::chrono::milliseconds(watch_ms));
  watch.held_throughout =
      holder.load(std::memory_order_relaxed) == watch.holder && takings.load(std::memory_order_relaxed) == taking;
  return watch;
}

}  // namespace mcrp
