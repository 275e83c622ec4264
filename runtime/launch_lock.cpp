#include "runtime/launch_lock.h"

#include <time.h>

#include <atomic>
#include <cstdint>

#include "runtime/thread_id.h"

namespace mcrp {
namespace {

std::mutex g_launch_mutex;
std::atomic<int> g_holder{0};
std::atomic<std::int64_t> g_taken_ns{0};

// The coarse clock: a few nanoseconds on every launch, and a report in seconds needs no more.
std::int64_t coarse_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

}  // namespace

NcclLaunchLock::NcclLaunchLock() : owned_(true) {
  g_launch_mutex.lock();
  note_taken();
}

NcclLaunchLock::NcclLaunchLock(std::try_to_lock_t) : owned_(g_launch_mutex.try_lock()) {
  if (owned_) note_taken();
}

NcclLaunchLock::~NcclLaunchLock() {
  if (!owned_) return;
  g_holder.store(0, std::memory_order_relaxed);
  g_launch_mutex.unlock();
}

void NcclLaunchLock::note_taken() {
  g_taken_ns.store(coarse_now_ns(), std::memory_order_relaxed);
  g_holder.store(this_thread_id(), std::memory_order_relaxed);
}

LaunchLockHolder launch_lock_holder() {
  LaunchLockHolder holder;
  holder.thread = g_holder.load(std::memory_order_relaxed);
  if (holder.thread != 0)
    holder.seconds = static_cast<double>(coarse_now_ns() - g_taken_ns.load(std::memory_order_relaxed)) * 1e-9;
  return holder;
}

}  // namespace mcrp
