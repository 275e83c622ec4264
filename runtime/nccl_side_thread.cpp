#include "runtime/nccl_side_thread.h"

#include <condition_variable>
#include <mutex>

namespace mcrp {

// Held by the thread too: it outlives the owner when a job is abandoned.
struct NcclSideThread::Shared {
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::function<ncclResult_t()> job;  // set while one waits to run
  bool running = false;               // from start() until the job has returned
  bool quit = false;
  ncclResult_t result = ncclSuccess;
  std::function<void()> abandoned;

  void serve() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return quit || job; });
      if (!job) break;  // quit, nothing (more) to run
      std::function<ncclResult_t()> next = std::move(job);
      job = nullptr;
      lock.unlock();
      const ncclResult_t rc = next();
      lock.lock();
      result = rc;
      running = false;
    }
    std::function<void()> then = std::move(abandoned);
    lock.unlock();
    if (then) then();
  }
};

NcclSideThread::~NcclSideThread() {
  if (!shared_) return;
  bool detach = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->quit = true;
    detach = shared_->running;
    shared_->changed.notify_all();
  }
  // A job stuck in NCCL for a peer that never came keeps its thread: joining would hang the caller.
  if (detach) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void NcclSideThread::start(std::function<ncclResult_t()> job) {
  if (!shared_) {
    shared_ = std::make_shared<Shared>();
    std::shared_ptr<Shared> shared = shared_;
    thread_ = std::thread([shared] { shared->serve(); });
  }
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->job = std::move(job);
  shared_->running = true;
  shared_->changed.notify_all();
}

bool NcclSideThread::busy() const {
  if (!shared_) return false;
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->running;
}

ncclResult_t NcclSideThread::result() const {
  if (!shared_) return ncclSuccess;
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->result;
}

void NcclSideThread::abandon(std::function<void()> then) {
  if (!shared_) {
    then();  // never started
    return;
  }
  std::unique_lock<std::mutex> lock(shared_->mutex);
  if (shared_->running) {
    shared_->abandoned = std::move(then);
    return;
  }
  lock.unlock();
  then();  // the job ended meanwhile: nothing left to wait for
}

}  // namespace mcrp
