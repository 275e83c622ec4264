// NCCL forbids concurrent calls on communicators of one device from several threads: every launch
// (group start to group end) and revoke holds this process-wide lock (NCCL's setup call does not:
// runtime/nccl_comm.cpp, start_init_on_side, says why). It remembers which thread holds it and
// counts its takings, for the report printed when MCRPMPI_NCCL_TIMEOUT expires
// (runtime/state_report.h): a lock held by one thread through a whole watch is what a cross-thread
// cycle through it looks like. Every blocking NCCL call takes it, so the bookkeeping is a few
// stores, inline: no clock read, no thread-local.
#pragma once
#include <pthread.h>

#include <atomic>
#include <mutex>

namespace mcrp {

namespace launch_lock_detail {
extern std::mutex mutex;
extern std::atomic<pthread_t> holder;       // 0: free
extern std::atomic<unsigned long> takings;  // written by the holder only
}  // namespace launch_lock_detail

class NcclLaunchLock {
 public:
  NcclLaunchLock() : owned_(true) {  // waits for the lock
    launch_lock_detail::mutex.lock();
    note_taken();
  }
  explicit NcclLaunchLock(std::try_to_lock_t) : owned_(launch_lock_detail::mutex.try_lock()) {  // see owns_lock()
    if (owned_) note_taken();
  }
  ~NcclLaunchLock() {
    if (!owned_) return;
    launch_lock_detail::holder.store(pthread_t{}, std::memory_order_relaxed);
    launch_lock_detail::mutex.unlock();
  }
  NcclLaunchLock(const NcclLaunchLock&) = delete;
  NcclLaunchLock& operator=(const NcclLaunchLock&) = delete;
  bool owns_lock() const { return owned_; }

 private:
  static void note_taken() {
    using namespace launch_lock_detail;
    takings.store(takings.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    holder.store(pthread_self(), std::memory_order_relaxed);
  }
  bool owned_;
};

// Who held the lock over a watch of `watch_ms`, read without the lock: the holder at its start
// (a pthread id; pthread_t{} when free) and whether the same taking lasted the whole watch.
struct LaunchLockWatch {
  pthread_t holder{};
  bool held_throughout = false;
};
LaunchLockWatch watch_launch_lock(int watch_ms);

}  // namespace mcrp
