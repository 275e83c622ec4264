#include "runtime/state_report.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <vector>

#include "runtime/launch_lock.h"
#include "runtime/nccl_comm.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "runtime/thread_id.h"
#include "runtime/wait_notes.h"

namespace mcrp {
namespace {

std::atomic<int> g_world_rank{-1};  // none: a Sessions-only program, or before MPI_Init

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

std::string thread_text(int thread) {
  return "thread " + std::to_string(thread) + (thread == this_thread_id() ? " (this one)" : "");
}

// How long the report watches the launch lock: long against a launch (microseconds), short against a
// timeout (seconds).
constexpr int kLockWatchMs = 100;

std::string launch_lock_line() {
  const LaunchLockWatch watch = watch_launch_lock(kLockWatchMs);
  if (watch.holder == pthread_t{}) return "NCCL launch lock: free";
  char pthread_text[32];
  std::snprintf(pthread_text, sizeof pthread_text, "0x%lx", static_cast<unsigned long>(watch.holder));
  const int thread = thread_id_of(watch.holder);
  const std::string who = thread != 0 ? thread_text(thread) + " (pthread " + pthread_text + ")"
                                      : std::string("pthread ") + pthread_text + " (no wait of it noted, so no id)";
  return "NCCL launch lock: held by " + who +
         (watch.held_throughout ? ", the same taking through the report's " + std::to_string(kLockWatchMs) + " ms watch"
                                : ", taken again or freed during the report's watch");
}

std::string wait_line(const ThreadWait& wait, const std::vector<NcclCommState>& comms) {
  std::string line = thread_text(wait.thread) + ": waiting " + seconds_text(wait.seconds) + " for " + wait.what;
  if (wait.comm == nullptr) return line;
  for (const NcclCommState& comm : comms) {
    if (comm.comm == wait.comm) return line + " on NCCL communicator #" + std::to_string(comm.serial);
  }
  return line + " on an NCCL communicator no longer alive";
}

void print_library_state(const std::string& headline) {
  const int rank = g_world_rank.load(std::memory_order_relaxed);
  const std::string pid = "pid " + std::to_string(getpid());
  const std::vector<NcclCommState> comms = nccl_comm_states();
  std::vector<std::string> lines;
  lines.push_back((rank >= 0 ? "rank " + std::to_string(rank) + " (" + pid + ")" : pid) + ": " + headline);
  lines.push_back(launch_lock_line());
  for (const NcclCommState& comm : comms) lines.push_back(comm.description);
  if (comms.empty()) lines.push_back("no NCCL communicator");
  const std::vector<ThreadWait> waits = threads_waiting();
  lines.push_back("threads waiting in the library: " + std::to_string(waits.size()) +
                  " (a thread not listed is in the base MPI, in the application, or idle)");
  for (const ThreadWait& wait : waits) lines.push_back(wait_line(wait, comms));
  lines.push_back("library requests in flight: " + describe_live_requests() +
                  "; background work pending: " + std::to_string(background_work_count()));
  std::string text;
  for (const std::string& line : lines) text += "mcrpmpi: " + line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);  // one write: ranks' reports do not interleave by line
  std::fflush(stderr);
}

}  // namespace

void remember_world_rank(int rank) { g_world_rank.store(rank, std::memory_order_relaxed); }

void report_library_state(const std::string& why) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  print_library_state(why + "; the library's state at this first timeout of the process:");
}

}  // namespace mcrp

extern "C" void mcrpmpi_report_state(const char* why) {
  mcrp::print_library_state(std::string(why != nullptr ? why : "asked") + "; the library's state now:");
}
