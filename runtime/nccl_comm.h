// One NCCL communicator per MPI communicator, created at the first call that routes to NCCL, cached
// as an MPI attribute and released by the attribute's delete callback (MPI_Comm_free,
// MPI_Comm_disconnect, MPI_Finalize); calls still in flight keep it alive until they finish, and
// NCCL's own communicator is destroyed only when nothing is in flight (runtime/nccl_teardown.h).
//
// Nothing here blocks the calling thread on NCCL. The first call (the same one on every rank: the
// route is agreed) issues an MPI_Ibcast of rank 0's NCCL unique id on the communicator; NCCL's
// nonblocking initialisation starts once the id has arrived. NCCL work is queued per communicator
// and launched in issue order once the communicator is ready and the previous launch has been
// enqueued: on a nonblocking communicator ncclGroupEnd may answer ncclInProgress (the first call
// connects to the peers, which takes them too), and NCCL accepts no further call on it until that
// has finished. All of this is advanced by every poll of a device request and every wait of the
// library, whichever communicator that wait is for, so two ranks that start work on two fresh
// communicators in opposite orders both get through (guarantee 2). Routing to NCCL at all is agreed beforehand from the WORLD map (every member can
// load NCCL; tuning/world_map.h), so no agreement round is needed here; a failed initialisation
// fails the calls waiting for it with an MPI error instead of hanging (MCRPMPI_NCCL_TIMEOUT bounds it).
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>

#include "device/handles.h"
#include "device/status.h"
#include "device/wait.h"

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
  const int device;
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

 private:
  enum class Phase { exchanging_id, initializing, ready, failed };
  void end_setup(Status result);  // under mutex_
  void step_setup();              // under mutex_
  void launch_queued();           // launches in order while allowed; takes mutex_ itself

  std::mutex mutex_;
  std::atomic<bool> stopped_{false};  // fail() has told NCCL to stop (or found nothing to stop)
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
};

// The NCCL communicator for `comm` on `device`, its setup started by this call if it is the first
// (see above). Only for calls routed to NCCL, which every rank of `comm` makes alike.
Status nccl_comm_for(MPI_Comm comm, int device, std::shared_ptr<NcclComm>* out);

// Advances every communicator with setup or launches outstanding, and tears down released ones
// when nothing is in flight (runtime/nccl_teardown.h); atomic loads when there is nothing to do.
void advance_nccl_comms();

// Whether any NCCL communicator of the process may have work in flight (not every one is quiet).
bool nccl_work_in_flight();

// Waits for an NCCL call that returned ncclInProgress (the communicators are nonblocking, so that
// no NCCL wait can hang without the library noticing) and converts the result to a Status.
Status settle(NcclComm& comm, ncclResult_t result, const char* what);

// NCCL forbids concurrent calls on communicators of one device from several threads: every
// launch (group start to group end) and creation holds this lock.
std::mutex& nccl_launch_mutex();

// Releases the communicator cached on MPI_COMM_WORLD, forgets unfinished work and tears down every
// released communicator; MPI_Finalize calls this before PMPI_Finalize, because the standard only
// promises attribute deletion on MPI_COMM_SELF there.
void release_world_nccl_comm();

}  // namespace mcrp
