// One NCCL communicator per MPI communicator, created at the first call that routes to NCCL, cached
// as an MPI attribute and released by the attribute's delete callback (MPI_Comm_free,
// MPI_Comm_disconnect, MPI_Finalize); calls still in flight keep it alive until they finish, and
// NCCL's own communicator is destroyed only when nothing is in flight (runtime/nccl_teardown.h).
//
// Nothing here blocks the calling thread on NCCL. The first call (the same one on every rank: the
// route is agreed) issues an MPI_Ibcast of rank 0's NCCL unique id on the communicator; NCCL's
// initialisation starts once the id has arrived. NCCL work is queued per communicator
// and launched in issue order once the communicator is ready and the previous launch has been
// enqueued: on a nonblocking communicator ncclGroupEnd may answer ncclInProgress (the first call
// connects to the peers, which takes them too), and NCCL accepts no further call on it until that
// has finished. All of this is advanced by every poll of a device request and every wait of the
// library, whichever communicator that wait is for, so two ranks that start work on two fresh
// communicators in opposite orders both get through (guarantee 2). Routing to NCCL at all is agreed beforehand from the WORLD map (every member can
// load NCCL; tuning/world_map.h), so no agreement round is needed here; a failed initialisation
// fails the calls waiting for it with an MPI error instead of hanging (MCRPMPI_NCCL_TIMEOUT bounds it).
//
// By default (MCRPMPI_NCCL_INLINE_LAUNCH unset or 1) the NCCL communicator is a blocking one, since
// NCCL 2.28 starts a thread at every ncclGroupEnd of a nonblocking communicator (src/group.cc):
// 2-4x raw NCCL's time for a small call on the H200, where a blocking one costs 1.0-1.4x. What may
// wait for peers stays off the caller: the setup runs on the communicator's side thread
// (runtime/nccl_side_thread.h), NCCL connects the collectives' peers during it
// (NCCL_RUNTIME_CONNECT=0, runtime/nccl_api.h), and a launch that opens point-to-point connections
// (ncclSend/ncclRecv and NCCL's AlltoAll, Gather, Scatter, which connect per peer at first use) runs
// there too; every other launch runs inline and returns once enqueued, as raw NCCL's does.
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/handles.h"
#include "device/status.h"
#include "device/wait.h"
#include "runtime/nccl_side_thread.h"
#include "runtime/nccl_transfers.h"

namespace mcrp {

// NCCL work submitted to a communicator, launched by it in submission order.
class QueuedLaunch {
 public:
  virtual ~QueuedLaunch() = default;
  // Called once, when its turn comes: `setup` is ok, or why NCCL cannot run on this communicator.
  // Returns true when NCCL is still enqueuing what it launched; enqueued() follows when it is done.
  virtual bool launch(const Status& setup) = 0;
  virtual void enqueued(const Status& result) = 0;
};

class NcclComm : public std::enable_shared_from_this<NcclComm> {
 public:
  NcclComm(MPI_Comm comm, int device);  // starts the setup (see above)
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t handle = nullptr;
  const int serial;  // 1, 2, ... in the order of creation: how the timeout report names it
  const int device;
  const bool inline_launch;  // a blocking NCCL communicator (see above)
  int size = 0;
  int rank = 0;
  device::Stream stream;  // non-blocking; each launch orders it after the legacy default stream
  std::atomic<bool> broken{false};  // set after a failure: the communicator is aborted, not finalized

  // After a failure (an NCCL error, MCRPMPI_NCCL_TIMEOUT): no further work is launched on this
  // communicator, work in flight fails instead of completing, and NCCL stops it now where it can
  // (ncclCommRevoke, NCCL >= 2.28: no rank is left spinning on the GPU for a peer that will not
  // come); the communicator itself is aborted when its MPI communicator is freed. Returns `why`.
  // Also for a failure already marked `broken` where it was found (under this object's lock): the
  // stop is made once, by whichever caller comes first.
  Status fail(const Status& why);
  // What work that completed on this communicator returns: ok, or the failure that ended it.
  Status completion() const;
  // `handle` once the setup has succeeded, else null; from any thread at any time. The setup
  // writes `handle` under this object's lock, which a wait that began during the setup (queued
  // behind it on another thread) does not hold.
  ncclComm_t handle_once_set_up() const { return set_up_.load(std::memory_order_acquire) ? handle : nullptr; }

  // Queues `work` and launches what can be launched now (this work too, on a ready communicator).
  Status submit(QueuedLaunch* work);
  // Removes queued work that is being destroyed unlaunched.
  void withdraw(QueuedLaunch* work);
  // Advances setup and enqueues without blocking, launching queued work as far as possible. Returns
  // true when nothing is left to do (setup over, nothing queued or being enqueued).
  bool advance();
  bool idle();  // what advance() returned, without advancing
  // Nothing of this communicator is on the GPU or on its way there (not being launched, enqueued or
  // queued, its stream idle); false also when another thread holds it. A failed communicator is
  // quiet: its work is stopped, not coming to an end anyone waits for.
  bool quiet();
  // Waits until the setup is over, keeping MPI progressing: ok, or why it failed. For callers in a
  // call every member makes (a communicator's device-only assertion), so that the setup does not
  // wait later for a member that has meanwhile gone off computing.
  Status wait_setup(device::ProgressHook& progress);

  // A blocking call's direct launch (collectives/nccl_path.cpp): takes the launch turn when the
  // communicator is ready and nothing is queued or being enqueued, so that issue order holds without
  // the queue; end_direct() hands the turn back and launches what was queued meanwhile.
  bool begin_direct();
  void end_direct();
  // After a launch answered ncclInProgress, with the turn held: waits until NCCL has enqueued it,
  // keeping MPI and the other communicators progressing.
  Status wait_enqueued(device::ProgressHook& progress);

  // Issues `calls` (group start to group end; values only, see nccl_side_thread.h), which send to the
  // ranks `to` and receive from `from`, with the launch turn held: on the calling thread under the
  // launch lock, or, on an inline-launch communicator when one of those connections is not open
  // yet, on the side thread. That answers ncclInProgress, and the turn's holder learns the end as on
  // a nonblocking communicator (wait_enqueued, advance). The peers matter only when inline_launch:
  // callers may pass none otherwise.
  template <typename Calls>
  ncclResult_t issue_p2p(const std::vector<int>& to, const std::vector<int>& from, Calls calls) {
    if (!inline_launch || connected(to, from)) return calls();
    return issue_on_side(to, from, std::move(calls));
  }
  // Its state in one line, for the timeout report (runtime/state_report.h); never waits for its lock.
  std::string describe();

  // One group of ncclSend/ncclRecv, as issue_p2p issues it.
  ncclResult_t issue_transfers(const std::vector<NcclTransfer>& group);
  // Every rank but this one: the peers of an all-to-all.
  std::vector<int> everyone_else() const;

 private:
  enum class Phase { exchanging_id, initializing, ready, failed };
  void end_setup(Status result);  // under mutex_
  bool step_setup();              // under mutex_; true when this step ended the setup at its deadline
  void launch_queued();           // launches in order while allowed; takes mutex_ itself
  void start_init_on_side();      // under mutex_: NCCL's setup call, on the side thread
  // The enqueue in progress: ncclInProgress, or how it ended (a side-thread launch's connections
  // are then open, or NCCL's answer on a nonblocking communicator).
  ncclResult_t enqueue_state();
  bool connected(const std::vector<int>& to, const std::vector<int>& from);
  ncclResult_t issue_on_side(const std::vector<int>& to, const std::vector<int>& from,
                             std::function<ncclResult_t()> calls);  // issue_p2p's side-thread launch

  void report_setup_timeout();  // without mutex_ (the report reads every communicator's state)

  std::mutex mutex_;
  std::atomic<bool> stopped_{false};  // fail() has told NCCL to stop (or found nothing to stop)
  std::atomic<bool> set_up_{false};   // the setup succeeded: `handle` is written for good
  Phase phase_ = Phase::exchanging_id;
  Status failure_;
  QueuedLaunch* enqueuing_ = nullptr;  // launched, NCCL still enqueuing it
  bool launching_ = false;             // a thread is inside a launch: others leave the queue alone
  MPI_Request id_request_ = MPI_REQUEST_NULL;
  struct {
    int ok;  // rank 0 obtained an id
    ncclUniqueId id;
  } shared_{};
  std::chrono::steady_clock::time_point deadline_;
  std::deque<QueuedLaunch*> queued_;
  // Inline launch: the side thread, where the side-thread launch connects to, and which
  // point-to-point connections are open (by peer; NCCL opens them per peer and direction).
  NcclSideThread side_;
  std::shared_ptr<ncclComm_t> side_handle_;  // where the setup job puts the handle
  std::mutex connections_mutex_;
  bool side_launch_ = false;
  std::vector<int> side_to_, side_from_;
  std::vector<char> sends_open_, receives_open_;
};

// The NCCL communicator for `comm` on `device`, its setup started by this call if it is the first
// (see above). Only for calls routed to NCCL, which every rank of `comm` makes alike.
Status nccl_comm_for(MPI_Comm comm, int device, std::shared_ptr<NcclComm>* out);

// Every NCCL communicator alive, in the order of creation, as the timeout report shows them.
struct NcclCommState {
  const NcclComm* comm = nullptr;
  int serial = 0;
  std::string description;
};
std::vector<NcclCommState> nccl_comm_states();

// Advances every communicator with setup or launches outstanding, and tears down released ones
// when nothing is in flight (runtime/nccl_teardown.h); atomic loads when there is nothing to do.
void advance_nccl_comms();

// Whether any NCCL communicator of the process may have work in flight (not every one is quiet).
bool nccl_work_in_flight();

// Waits for an NCCL call that returned ncclInProgress (the communicators are nonblocking, so that
// no NCCL wait can hang without the library noticing) and converts the result to a Status.
Status settle(NcclComm& comm, ncclResult_t result, const char* what);

// Releases the communicator cached on MPI_COMM_WORLD, forgets unfinished work and tears down every
// released communicator; MPI_Finalize calls this before PMPI_Finalize, because the standard only
// promises attribute deletion on MPI_COMM_SELF there.
void release_world_nccl_comm();

}  // namespace mcrp
