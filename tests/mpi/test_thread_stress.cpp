// Threads under stress (issue 13): MPI_THREAD_MULTIPLE, N threads (8) each on its own duplicate of
// WORLD running the mixed calls of tests/mpi/mixed_calls.h -- blocking, nonblocking and persistent
// collectives, point-to-point and communicator create/free, device (or fake device) and host buffers
// -- for a number of rounds or a fixed time, every result checked. A deadlock fails by the ctest
// timeout; before that, a watchdog says on stderr which thread is stuck in which part of its round,
// with its kernel thread id, and has the library print its own state (mcrpmpi_report_state,
// runtime/state_report.h: communicators, launch lock, each thread's wait under the same ids), so a
// hang on a machine one cannot log into still says where it is.
//   test_thread_stress --space host|fake-device|device [--threads 8] [--rounds 64]
//                      [--seconds S: rounds until S seconds have passed, instead of --rounds]
//                      [--stall-report S: report threads that made no round for S seconds (60; 0 off)]
#include <dlfcn.h>
#include <mpi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/mixed_calls.h"

namespace {

using namespace mcrp_test;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What one thread has done, read by the watchdog.
struct ThreadProgress {
  std::atomic<int> rounds{0};
  std::atomic<bool> finished{false};
  std::atomic<const char*> step{nullptr};  // MixedCalls::record_steps_in
  std::atomic<int> thread_id{0};           // the kernel's id, as the library's report and debuggers name it
};

// Reports on stderr, once per stall, where every thread is when none has finished a round for
// `stall_seconds`, and when they move again. Stops with its destructor.
class Watchdog {
 public:
  Watchdog(std::vector<ThreadProgress>& threads, int rank, double stall_seconds)
      : threads_(threads), rank_(rank), stall_seconds_(stall_seconds) {
    if (stall_seconds_ > 0) watcher_ = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  long total_rounds() const {
    long total = 0;
    for (const ThreadProgress& thread : threads_) total += thread.rounds.load();
    return total;
  }

  void report(double stalled_for) const {
    for (std::size_t t = 0; t < threads_.size(); ++t) {
      const ThreadProgress& thread = threads_[t];
      const char* step = thread.step.load(std::memory_order_relaxed);
      std::fprintf(stderr, "stall: rank %d thread %zu (tid %d), no round finished for %.0f s: %d rounds done, %s%s\n",
                   rank_, t, thread.thread_id.load(), stalled_for, thread.rounds.load(),
                   thread.finished ? "finished"
                   : step          ? "in "
                                   : "between rounds",
                   !thread.finished && step ? step : "");
    }
    std::fflush(stderr);
    // The library's view of the same moment, where the library is loaded (not under a plain MPI).
    using Report = void (*)(const char*);
    if (auto library_report = reinterpret_cast<Report>(dlsym(RTLD_DEFAULT, "mcrpmpi_report_state"))) {
      library_report(
          ("test_thread_stress: no round finished for " + std::to_string(static_cast<int>(stalled_for)) + " s")
              .c_str());
    }
  }

  void watch() {
    long last = total_rounds();
    Clock::time_point moved = Clock::now();
    bool reported = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
      const long now = total_rounds();
      if (now != last) {
        if (reported) {
          std::fprintf(stderr, "stall: rank %d moved again after %.0f s\n", rank_, seconds_since(moved));
          std::fflush(stderr);
        }
        last = now;
        moved = Clock::now();
        reported = false;
      } else if (!reported && seconds_since(moved) >= stall_seconds_) {
        report(seconds_since(moved));
        reported = true;
      }
    }
  }

  std::vector<ThreadProgress>& threads_;
  const int rank_;
  const double stall_seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread watcher_;
};

// Whether a thread on `comm` goes on to another round. With a time limit, the ranks of `comm` agree
// (one host allreduce), so all of them make the same calls.
bool another_round(int round, int rounds, double seconds, Clock::time_point start, MPI_Comm comm) {
  if (seconds <= 0) return round < rounds;
  int time_up = seconds_since(start) >= seconds ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &time_up, 1, MPI_INT, MPI_MAX, comm);
  return time_up == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int thread_count = std::atoi(option(argc, argv, "--threads", "8").c_str());
  const int rounds = std::atoi(option(argc, argv, "--rounds", "64").c_str());
  const double seconds = std::atof(option(argc, argv, "--seconds", "0").c_str());
  const double stall_seconds = std::atof(option(argc, argv, "--stall-report", "60").c_str());
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = space_option(argc, argv, "host");
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (space && provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIPPED: the base MPI does not provide MPI_THREAD_MULTIPLE\n");
    } else if (space) {
      Checker checker;
      std::vector<MPI_Comm> comms(static_cast<std::size_t>(thread_count));
      for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      std::vector<Checker> checkers(comms.size());
      std::vector<long> calls(comms.size(), 0);
      std::vector<ThreadProgress> progress(comms.size());
      // Every thread's buffers are allocated before any thread starts and freed after all have
      // ended, as an application with a caching allocator does. A cudaFree waits for every kernel
      // on the device, NCCL's of the other threads' communicators included, while holding the
      // context's lock: a thread that frees while another waits for a peer stuck the same way
      // deadlocks both ranks, with raw NCCL as with the library (docs/routing.md, "Streams").
      std::vector<std::unique_ptr<MixedCalls>> mixes;
      for (std::size_t t = 0; t < comms.size(); ++t) {
        mixes.push_back(std::make_unique<MixedCalls>(checkers[t], *space, comms[t], 1 << 16));
        mixes[t]->record_steps_in(&progress[t].step);
      }
      const Clock::time_point start = Clock::now();
      {
        Watchdog watchdog(progress, rank, stall_seconds);
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < comms.size(); ++t) {
          threads.emplace_back([&, t] {
            progress[t].thread_id = static_cast<int>(syscall(SYS_gettid));
            for (int round = 0; another_round(round, rounds, seconds, start, comms[t]); ++round) {
              calls[t] += mixes[t]->run_round(round);
              progress[t].rounds.fetch_add(1);
            }
            progress[t].finished = true;
          });
        }
        for (std::thread& thread : threads) thread.join();
      }
      const double elapsed = seconds_since(start);
      mixes.clear();
      long total = 0;
      int fewest = progress.empty() ? 0 : progress[0].rounds.load(), most = fewest;
      for (std::size_t t = 0; t < comms.size(); ++t) {
        const int rc = checkers[t].finish(comms[t], ("thread " + std::to_string(t)).c_str());
        checker.check(rc == 0, "thread " + std::to_string(t) + " on its own communicator");
        total += calls[t];
        fewest = std::min(fewest, progress[t].rounds.load());
        most = std::max(most, progress[t].rounds.load());
        MPI_Comm_free(&comms[t]);
      }
      if (rank == 0) {
        std::printf("%d threads, %ld calls per rank, %d-%d rounds a thread, %.1f s\n", thread_count, total, fewest,
                    most, elapsed);
      }
      exit_code = checker.finish(MPI_COMM_WORLD, "thread_stress");
    }
  }
  MPI_Finalize();
  return exit_code;
}
