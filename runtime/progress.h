// MPI progress while the library waits on the GPU or on NCCL (rule 2): a peer blocked in a base-MPI
// call must not be starved by this rank spinning on cudaEventQuery. Each poll drives the base MPI's
// progress engine (an Iprobe on a private communicator), advances NCCL communicators being set up,
// checks the NCCL communicator being waited on for an asynchronous error, and enforces
// MCRPMPI_NCCL_TIMEOUT.
#pragma once
#include <nccl.h>

#include <atomic>
#include <chrono>

#include "device/wait.h"
#include "runtime/wait_notes.h"

namespace mcrp {

// Now plus `seconds` (fractions kept).
std::chrono::steady_clock::time_point deadline_after(double seconds);
// `from` plus `seconds`.
std::chrono::steady_clock::time_point deadline_after(double seconds, std::chrono::steady_clock::time_point from);

// MCRPMPI_NCCL_TIMEOUT from a start: expired() reads the clock on every 64th call only (a clock
// read costs more than a progress poll).
// The first expiry in the process also prints what the library was doing (runtime/state_report.h).
class NcclDeadline {
 public:
  NcclDeadline();
  // The timeout error once the deadline has passed (checked on every 64th call), else ok.
  Status expired();
  std::chrono::steady_clock::time_point start() const { return start_; }

 private:
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point deadline_;
  bool has_deadline_;
  unsigned calls_ = 0;
};

class MpiProgress final : public device::ProgressHook {
 public:
  // what: what the thread waits for, a string literal (runtime/wait_notes.h); comm: the NCCL
  // communicator whose failure should end the wait, or null.
  explicit MpiProgress(const char* what, const NcclComm* comm = nullptr);
  ~MpiProgress() override = default;
  MpiProgress(const MpiProgress&) = delete;
  MpiProgress& operator=(const MpiProgress&) = delete;
  Status poll() override;

 private:
  const NcclComm* comm_;
  ncclComm_t nccl_comm_;  // comm_'s handle, once its setup has succeeded (asked again every 64 polls)
  NcclDeadline deadline_;
  WaitNote note_;  // after deadline_: begins at its start
};

// Drives the base MPI's progress once: a probe of the library's duplicate of MPI_COMM_WORLD
// (progress_probe_comm in runtime/self_comm.h says why that communicator).
void drive_mpi_progress();

// Everything the library advances without being asked by one request: NCCL communicators being set
// up or enqueuing, requests the application freed while active, and registered background work
// (the point-to-point protocol engines, p2p/engine.h). A few atomic loads when nothing is pending.
void advance_library();

// Background work: `advance` runs from advance_library() while *pending is above zero. For work
// whose progress others depend on (a peer waiting for this rank's clear-to-send).
void register_background_work(void (*advance)(), const std::atomic<int>* pending);
// True while some registered background work is pending, or some request of the library's has its
// op in flight (runtime/requests.h, live_request_count): a peer may be waiting for what only this
// process's library progress does next. Blocking calls then do not block inside the base MPI:
// the Wait/Test family, blocking point-to-point and probes, and blocking collectives poll instead,
// advancing the library in between (MPI's progress rule: an operation every rank has started
// completes while a rank is blocked in another call).
bool background_work_pending();
// How much such work is pending (the sum of the counters and the requests in flight): a change
// tells that some of it moved.
int background_work_count();
// advance_library() if background work is pending, else nothing (an atomic load per kind of work).
// For the calls a polling program makes while it waits (the Test family, MPI_Iprobe): they must let
// that work advance also when nothing they look at is the library's.
void advance_background_work();

}  // namespace mcrp
