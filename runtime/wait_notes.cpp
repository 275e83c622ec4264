#include "runtime/wait_notes.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "runtime/thread_id.h"

namespace mcrp {
namespace {

using Clock = std::chrono::steady_clock;

// One per thread that ever waited, in the list while the thread lives. Written by its thread only;
// read by the report, which may see a wait as it begins or ends.
struct ThreadRecord {
  int thread = 0;
  pthread_t handle{};
  std::atomic<const char*> what{nullptr};  // null: not waiting
  std::atomic<const NcclComm*> comm{nullptr};
  std::atomic<std::int64_t> since{0};  // Clock ticks
};

// Never destroyed: threads may end after static destruction has begun.
struct Registry {
  std::mutex mutex;
  std::vector<ThreadRecord*> records;
};
Registry& registry() {
  static Registry* const r = new Registry;
  return *r;
}

// The thread's record, in the list from its first wait to its end. The pointer is a plain
// thread-local, read on every wait without the guard a thread-local object with a constructor
// costs; the object with the destructor is touched once, at the first wait.
struct ThisThread {
  ThreadRecord record;
  ThisThread() {
    record.thread = this_thread_id();
    record.handle = pthread_self();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.records.push_back(&record);
  }
  ~ThisThread();
};
thread_local ThreadRecord* t_record = nullptr;

ThisThread::~ThisThread() {
  t_record = nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.records.erase(std::remove(r.records.begin(), r.records.end(), &record), r.records.end());
}

ThreadRecord& first_record() {
  thread_local ThisThread self;
  t_record = &self.record;
  return self.record;
}

ThreadRecord& this_record() { return t_record != nullptr ? *t_record : first_record(); }

}  // namespace

bool note_wait_begun(const char* what, const NcclComm* comm, Clock::time_point since) {
  ThreadRecord& record = this_record();
  if (record.what.load(std::memory_order_relaxed) != nullptr) return false;
  record.comm.store(comm, std::memory_order_relaxed);
  record.since.store(since.time_since_epoch().count(), std::memory_order_relaxed);
  record.what.store(what, std::memory_order_release);
  return true;
}

void note_wait_ended() { this_record().what.store(nullptr, std::memory_order_release); }

int thread_id_of(pthread_t thread) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const ThreadRecord* record : r.records) {
    if (pthread_equal(record->handle, thread)) return record->thread;
  }
  return 0;
}

std::vector<ThreadWait> threads_waiting() {
  const std::int64_t now = Clock::now().time_since_epoch().count();
  std::vector<ThreadWait> waits;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const ThreadRecord* record : r.records) {
      const char* what = record->what.load(std::memory_order_acquire);
      if (what == nullptr) continue;
      ThreadWait wait;
      wait.thread = record->thread;
      wait.what = what;
      wait.comm = record->comm.load(std::memory_order_relaxed);
      wait.seconds =
          std::chrono::duration<double>(Clock::duration(now - record->since.load(std::memory_order_relaxed))).count();
      waits.push_back(wait);
    }
  }
  std::sort(waits.begin(), waits.end(), [](const ThreadWait& a, const ThreadWait& b) { return a.seconds > b.seconds; });
  return waits;
}

}  // namespace mcrp
