#include "device/background_free.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace mcrp::device {
namespace {

struct FreeQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void()>> queued;
  int running = 0;  // taken off the queue, not finished
  bool started = false;
};

FreeQueue& free_queue() {
  static FreeQueue* instance = new FreeQueue;  // never destroyed: the thread is detached
  return *instance;
}

void serve(FreeQueue& q) {
  std::unique_lock<std::mutex> lock(q.mutex);
  for (;;) {
    q.changed.wait(lock, [&] { return !q.queued.empty(); });
    std::function<void()> release = std::move(q.queued.front());
    q.queued.pop_front();
    ++q.running;
    lock.unlock();
    release();
    lock.lock();
    --q.running;
    q.changed.notify_all();
  }
}

}  // namespace

void free_later(std::function<void()> release) {
  FreeQueue& q = free_queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  q.queued.push_back(std::move(release));
  if (!q.started) {
    q.started = true;
    std::thread(serve, std::ref(q)).detach();
  }
  q.changed.notify_all();
}

void wait_for_frees() {
  FreeQueue& q = free_queue();
  std::unique_lock<std::mutex> lock(q.mutex);
  q.changed.wait(lock, [&] { return q.queued.empty() && q.running == 0; });
}

}  // namespace mcrp::device
