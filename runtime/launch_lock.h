// NCCL forbids concurrent calls on communicators of one device from several threads: every launch
// (group start to group end) and revoke holds this process-wide lock (NCCL's setup call does not:
// runtime/nccl_comm.cpp, start_init_on_side, says why). It remembers which
// thread holds it since when, for the report printed when MCRPMPI_NCCL_TIMEOUT expires
// (runtime/state_report.h): a lock held for seconds is what a cross-thread cycle through it looks like.
#pragma once
#include <mutex>

namespace mcrp {

class NcclLaunchLock {
 public:
  NcclLaunchLock();                             // waits for the lock
  explicit NcclLaunchLock(std::try_to_lock_t);  // takes it only if it is free: see owns_lock()
  ~NcclLaunchLock();
  NcclLaunchLock(const NcclLaunchLock&) = delete;
  NcclLaunchLock& operator=(const NcclLaunchLock&) = delete;
  bool owns_lock() const { return owned_; }

 private:
  void note_taken();
  bool owned_;
};

// Who holds the lock: a thread id (runtime/thread_id.h) and for how many seconds; thread 0 when it
// is free. Read without the lock (a diagnostic: the two values may come from consecutive holders).
struct LaunchLockHolder {
  int thread = 0;
  double seconds = 0;
};
LaunchLockHolder launch_lock_holder();

}  // namespace mcrp
