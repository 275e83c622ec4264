#include "device/quiet_work.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace mcrp::device {
namespace {

struct DeferredQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> queued;
  std::size_t running = 0;  // taken off the queue, not finished
  bool started = false;
};

DeferredQueue& deferred_queue() {
  static DeferredQueue* instance = new DeferredQueue;  // never destroyed: the thread is detached
  return *instance;
}

bool always_open(const std::function<void()>& work) {
  work();
  return true;
}

std::atomic<QuietGate> g_gate{&always_open};

// Runs `batch` through the gate, trying again with a growing pause (up to 5 ms) while it is shut:
// deferred work is not urgent, and each try costs the runtime a look at every NCCL communicator.
void run_when_quiet(std::deque<std::function<void()>>& batch) {
  const std::function<void()> run_all = [&batch] {
    for (std::function<void()>& work : batch) work();
  };
  for (useconds_t pause = 50; !run_if_quiet(run_all); pause = std::min(2 * pause, 5000u)) {
    usleep(pause);
  }
}

void serve(DeferredQueue& q) {
  std::unique_lock<std::mutex> lock(q.mutex);
  for (;;) {
    q.changed.wait(lock, [&] { return !q.queued.empty(); });
    std::deque<std::function<void()>> batch;
    batch.swap(q.queued);
    q.running = batch.size();
    lock.unlock();
    run_when_quiet(batch);
    lock.lock();
    q.running = 0;
    q.changed.notify_all();
  }
}

bool deferred_done(DeferredQueue& q) { return q.queued.empty() && q.running == 0; }

}  // namespace

void set_quiet_gate(QuietGate gate) { g_gate.store(gate != nullptr ? gate : &always_open, std::memory_order_release); }

bool run_if_quiet(const std::function<void()>& work) { return g_gate.load(std::memory_order_acquire)(work); }

void defer_until_quiet(std::function<void()> work) {
  DeferredQueue& q = deferred_queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  q.queued.push_back(std::move(work));
  if (!q.started) {
    q.started = true;
    std::thread(serve, std::ref(q)).detach();
  }
  q.changed.notify_all();
}

void wait_for_deferred() {
  DeferredQueue& q = deferred_queue();
  std::unique_lock<std::mutex> lock(q.mutex);
  q.changed.wait(lock, [&] { return deferred_done(q); });
}

Status wait_for_deferred(ProgressHook& progress) {
  DeferredQueue& q = deferred_queue();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(q.mutex);
      if (deferred_done(q)) return {};
    }
    MCRP_TRY(progress.poll());
  }
}

}  // namespace mcrp::device
