#include "runtime/progress_thread.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "device/cuda_runtime.h"
#include "runtime/config.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

// How long the helper sleeps between looks: the shortest after an advance of its own that moved
// some work (a rank stalled in the base MPI moves its transfers at that pace), growing by half up
// to kWaitingPause while its advances move nothing (a receive posted long before its message, while
// the program computes: about a thousand looks a second instead of twenty thousand), and doubling
// up to the longest while nothing is owed or the program advances the library itself (so a stall
// is noticed within it).
constexpr auto kShortestPause = std::chrono::microseconds(50);
constexpr auto kWaitingPause = std::chrono::milliseconds(1);
constexpr auto kLongestPause = std::chrono::milliseconds(10);

constexpr int kNotTold = -1;
std::atomic<int> g_program_level{kNotTold};

class Helper {
 public:
  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    std::thread ending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
      ending = std::move(thread_);
    }
    wake_.notify_all();
    ending.join();
  }

  bool running() {
    std::lock_guard<std::mutex> lock(mutex_);
    return thread_.joinable();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    std::chrono::microseconds pause = kShortestPause;
    unsigned seen = advances_so_far();
    int owed_after_last = -1;  // the pending work after the helper's last advance
    while (!stopping_) {
      wake_.wait_for(lock, pause, [this] { return stopping_; });
      if (stopping_) break;
      const unsigned now = advances_so_far();
      if (now != seen || !background_work_pending()) {
        seen = now;
        owed_after_last = -1;
        pause = std::min<std::chrono::microseconds>(pause * 2, kLongestPause);
        continue;
      }
      // Nobody advanced the library since the last look while work is owed: do it here.
      lock.unlock();
      drive_mpi_progress();
      advance_library();
      lock.lock();
      seen = advances_so_far();
      const int owed = background_work_count();
      const bool moved = owed != owed_after_last;
      owed_after_last = owed;
      pause = moved ? kShortestPause : std::min<std::chrono::microseconds>(pause * 3 / 2, kWaitingPause);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

Helper& helper() {
  static Helper* instance = new Helper;  // never destroyed: a program may exit without MPI_Finalize
  return *instance;
}

}  // namespace

int init_base_mpi(int* argc, char*** argv, const int* required, int* provided) {
  const bool raise = config().progress_thread == Config::ProgressThread::always && device::cuda_available();
  if (!raise || provided == nullptr) {
    return required == nullptr ? PMPI_Init(argc, argv) : PMPI_Init_thread(argc, argv, *required, provided);
  }
  const int asked = required == nullptr ? MPI_THREAD_SINGLE : *required;
  const int rc = PMPI_Init_thread(argc, argv, std::max(asked, int{MPI_THREAD_MULTIPLE}), provided);
  if (rc != MPI_SUCCESS) return rc;
  *provided = std::min(asked, *provided);
  g_program_level.store(*provided, std::memory_order_release);
  return rc;
}

int query_thread_level(int* provided) {
  const int level = g_program_level.load(std::memory_order_acquire);
  if (level == kNotTold || provided == nullptr) return PMPI_Query_thread(provided);
  *provided = level;
  return MPI_SUCCESS;
}

void start_progress_thread() {
  if (config().progress_thread == Config::ProgressThread::off) return;
  int provided = MPI_THREAD_SINGLE;
  if (PMPI_Query_thread(&provided) != MPI_SUCCESS || provided != MPI_THREAD_MULTIPLE) return;
  // A program that exits without MPI_Finalize: stopped before the static objects it may use go.
  static const bool stopped_at_exit = std::atexit([] { helper().stop(); }) == 0;
  (void)stopped_at_exit;
  helper().start();
}

void stop_progress_thread() { helper().stop(); }

bool progress_thread_running() { return helper().running(); }

}  // namespace mcrp

extern "C" int mcrpmpi_progress_thread_running() { return mcrp::progress_thread_running() ? 1 : 0; }
