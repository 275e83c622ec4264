#include "runtime/progress.h"

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <string>

#include "runtime/config.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_comm.h"
#include "runtime/progress_thread.h"
#include "runtime/requests.h"
#include "runtime/self_comm.h"
#include "runtime/state_report.h"

namespace mcrp {
namespace {

struct BackgroundWork {
  void (*advance)() = nullptr;
  const std::atomic<int>* pending = nullptr;
};
constexpr int kMaxBackgroundWork = 4;
BackgroundWork g_background[kMaxBackgroundWork];
std::atomic<int> g_background_count{0};
thread_local bool t_in_background = false;  // background work may poll progress: no re-entry

}  // namespace

void register_background_work(void (*advance)(), const std::atomic<int>* pending) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const int n = g_background_count.load(std::memory_order_acquire);
  if (n >= kMaxBackgroundWork) return;
  g_background[n] = BackgroundWork{advance, pending};
  g_background_count.store(n + 1, std::memory_order_release);
  start_progress_thread();  // so that the work advances also while the program does not
}

int background_work_count() {
  const int n = g_background_count.load(std::memory_order_acquire);
  // The library's own requests in flight first: their next steps are taken by this process's
  // library progress only, and a peer may be waiting on them (test_coll_random found ranks blocked
  // in a host MPI_Barrier while a peer waited on their queued launches, 2026-11-29).
  int total = live_request_count();
  for (int i = 0; i < n; ++i) total += g_background[i].pending->load(std::memory_order_acquire);
  return total;
}

bool background_work_pending() { return background_work_count() > 0; }

void advance_background_work() {
  if (background_work_pending()) advance_library();
}

void advance_library() {
  note_advance();
  advance_nccl_comms();
  advance_live_requests();
  const int n = g_background_count.load(std::memory_order_acquire);
  if (n == 0 || t_in_background) return;
  t_in_background = true;
  for (int i = 0; i < n; ++i) {
    if (g_background[i].pending->load(std::memory_order_acquire) > 0) g_background[i].advance();
  }
  t_in_background = false;
}

void drive_mpi_progress() {
  const MPI_Comm comm = progress_probe_comm();
  if (comm == MPI_COMM_NULL) return;
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
}

std::chrono::steady_clock::time_point deadline_after(double seconds, std::chrono::steady_clock::time_point from) {
  return from + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

std::chrono::steady_clock::time_point deadline_after(double seconds) {
  return deadline_after(seconds, std::chrono::steady_clock::now());
}

NcclDeadline::NcclDeadline()
    : start_(std::chrono::steady_clock::now()),
      deadline_(deadline_after(config().nccl_timeout_s, start_)),
      has_deadline_(config().nccl_timeout_s > 0) {}

Status NcclDeadline::expired() {
  if (!has_deadline_ || (++calls_ & 63u) != 0 || std::chrono::steady_clock::now() <= deadline_) return {};
  const std::string why = "no completion within " + nccl_timeout_text();
  report_library_state(why);
  return Status(MPI_ERR_OTHER, why);
}

// A wait may begin while the communicator is still being set up (a call queued behind the setup,
// on one thread, while another advances it): its handle is taken once the setup has succeeded.
MpiProgress::MpiProgress(const char* what, const NcclComm* comm)
    : comm_(comm),
      nccl_comm_(comm != nullptr ? comm->handle_once_set_up() : nullptr),
      note_(what, comm, deadline_.start()) {}

Status MpiProgress::poll() {
  drive_mpi_progress();
  advance_library();  // whichever communicator this wait is for
  // Every 64 polls, what costs more than a poll: noting the wait (once), NCCL's error state.
  if (note_.polled()) {
    if (nccl_comm_ == nullptr && comm_ != nullptr) nccl_comm_ = comm_->handle_once_set_up();
    if (nccl_comm_ != nullptr) MCRP_TRY(nccl_async_error(nccl_comm_));
  }
  return deadline_.expired();
}

}  // namespace mcrp
