#include "runtime/nccl_comm.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "runtime/comm_attribute.h"
#include "runtime/config.h"
#include "runtime/launch_lock.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_teardown.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/state_report.h"

namespace mcrp {
namespace {

// What the attribute holds. Calls in flight hold the communicator too, so freeing the MPI
// communicator under them does not pull NCCL's away.
struct CommEntry {
  std::shared_ptr<NcclComm> nccl;
};

int delete_entry(MPI_Comm, int, void* value, void*) {
  delete static_cast<CommEntry*>(value);
  forget_comm_attributes();
  return MPI_SUCCESS;
}

std::atomic<bool> g_keyval_made{false};

// A duplicated communicator gets its own NCCL communicator.
int keyval() {
  static const int key = [] {
    g_keyval_made.store(true, std::memory_order_release);
    return new_comm_keyval(delete_entry);
  }();
  return key;
}

// Communicators with setup or launches outstanding; g_busy_count mirrors the size for a lock-free
// check. Held by shared_ptr: a communicator freed by MPI still finishes what was submitted to it.
std::mutex g_busy_mutex;
std::vector<std::shared_ptr<NcclComm>> g_busy;
std::atomic<int> g_busy_count{0};
// Set while this thread advances communicators: a launch polls MPI progress, which must not
// re-enter (cheap to skip: the outer frame goes on advancing).
thread_local bool t_advancing = false;

// Every NcclComm alive, for the question whether any work is in flight (nccl_work_in_flight).
std::mutex g_live_mutex;
std::vector<NcclComm*> g_live;
std::atomic<int> g_serials{0};

void mark_busy(const std::shared_ptr<NcclComm>& comm) {
  std::lock_guard<std::mutex> lock(g_busy_mutex);
  if (std::find(g_busy.begin(), g_busy.end(), comm) == g_busy.end()) g_busy.push_back(comm);
  g_busy_count.store(static_cast<int>(g_busy.size()), std::memory_order_release);
}

// The state of a nonblocking communicator's pending operation: ncclInProgress, ncclSuccess, or why
// it failed.
ncclResult_t pending_state(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  const ncclResult_t rc = nccl_api()->CommGetAsyncError(comm, &state);
  return rc != ncclSuccess ? rc : state;
}

// An NCCL failure as an MPI error: "what: NCCL's error (NCCL's last message)".
Status nccl_failure(const std::string& what, ncclResult_t result, ncclComm_t comm) {
  const NcclApi* nccl = nccl_api();
  return Status(MPI_ERR_OTHER, what + ": " + nccl->GetErrorString(result) + " (" + nccl->GetLastError(comm) + ")");
}

// Polls `state` (ncclInProgress, or how the operation ended) until the operation has ended,
// keeping MPI progressing.
template <typename State>
Status wait_not_in_progress(State state, ncclComm_t comm, const char* what, device::ProgressHook& progress) {
  for (;;) {
    const ncclResult_t now = state();
    if (now == ncclSuccess) return {};
    if (now != ncclInProgress) return nccl_failure(what, now, comm);
    MCRP_TRY(progress.poll());
  }
}

void log_debug(const char* what, int rank, int size, const std::string& detail) {
  if (config().debug) std::fprintf(stderr, "mcrpmpi[%d/%d]: %s%s\n", rank, size, what, detail.c_str());
}

std::chrono::steady_clock::time_point setup_deadline() {
  return deadline_after(config().nccl_timeout_s > 0 ? config().nccl_timeout_s : 1e9);
}

}  // namespace

NcclComm::NcclComm(MPI_Comm comm, int device_ordinal)
    : serial(g_serials.fetch_add(1, std::memory_order_relaxed) + 1),
      device(device_ordinal),
      inline_launch(nccl_inline_launch()),
      deadline_(setup_deadline()) {
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.push_back(this);
  }
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  sends_open_.assign(static_cast<std::size_t>(size), 0);
  receives_open_.assign(static_cast<std::size_t>(size), 0);
  sends_open_[static_cast<std::size_t>(rank)] = receives_open_[static_cast<std::size_t>(rank)] = 1;  // none to itself
  const NcclApi* nccl = nccl_api();
  if (rank == 0) shared_.ok = nccl != nullptr && nccl->GetUniqueId(&shared_.id) == ncclSuccess ? 1 : 0;
  // Issued here, by the same call on every rank, so it matches like any other collective on `comm`.
  if (PMPI_Ibcast(&shared_, sizeof shared_, MPI_BYTE, 0, comm, &id_request_) != MPI_SUCCESS) {
    end_setup(Status(MPI_ERR_OTHER, "MPI_Ibcast of the NCCL unique id failed"));
  }
}

NcclComm::~NcclComm() {
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.erase(std::remove(g_live.begin(), g_live.end(), this), g_live.end());
  }
  // A nonblocking collective's request may not be freed: complete it (every rank issued it).
  if (id_request_ != MPI_REQUEST_NULL) PMPI_Wait(&id_request_, MPI_STATUS_IGNORE);
  // The side thread's setup puts the handle where only it and this object see it.
  const std::shared_ptr<ncclComm_t> slot = side_handle_;
  const ncclComm_t known = handle;
  const int device_ordinal = device;
  auto handle_now = [slot, known] { return known != nullptr || !slot ? known : *slot; };
  if (side_.busy()) {
    // A side-thread job still inside NCCL (its peer never came): the communicator is aborted once
    // the job returns, never under it.
    side_.abandon([handle_now, device_ordinal] { retire_nccl_handle(handle_now(), device_ordinal, true); });
    return;
  }
  // Destroyed now only if nothing is in flight (the usual case of one thread): a destroy waits for
  // every NCCL kernel of the process (see nccl_teardown.h).
  retire_nccl_handle(handle_now(), device, broken || phase_ != Phase::ready);
  tear_down_retired_when_quiet();
}

bool NcclComm::quiet() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (phase_ != Phase::ready || broken) return true;
  if (side_.busy()) return false;
  if (launching_ || enqueuing_ != nullptr || !queued_.empty()) return false;
  device::DeviceGuard guard(device);
  return !device::stream_busy(stream.get());
}

bool nccl_work_in_flight() {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return !std::all_of(g_live.begin(), g_live.end(), [](NcclComm* comm) { return comm->quiet(); });
}

void NcclComm::end_setup(Status result) {
  if (result.ok()) set_up_.store(true, std::memory_order_release);  // after the handle's last write
  phase_ = result.ok() ? Phase::ready : Phase::failed;
  failure_ = result;
  if (!result.ok()) broken = true;
  log_debug(result.ok() ? "created NCCL communicator on device " : "NCCL communicator setup failed: ", rank, size,
            result.ok() ? std::to_string(device) : result.message());
}

bool NcclComm::step_setup() {
  if (phase_ == Phase::exchanging_id) {
    int arrived = 0;
    if (PMPI_Test(&id_request_, &arrived, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      end_setup(Status(MPI_ERR_OTHER, "MPI_Ibcast of the NCCL unique id failed"));
    } else if (arrived && !shared_.ok) {
      end_setup(Status(MPI_ERR_OTHER, "rank 0 could not create an NCCL unique id"));
    } else if (arrived) {
      start_init_on_side();
    }
  }
  if (phase_ == Phase::initializing) {
    ncclResult_t state = ncclInProgress;
    if (!side_.busy()) {
      state = side_.result();
      handle = *side_handle_;
      // A nonblocking communicator's setup goes on inside NCCL after its call has returned.
      if (state == ncclSuccess && !inline_launch) state = pending_state(handle);
    }
    if (state == ncclSuccess) {
      device::DeviceGuard guard(device);
      end_setup(device::create_library_stream(stream));
    } else if (state != ncclInProgress) {
      end_setup(nccl_failure("ncclCommInitRankConfig", state, handle));
    } else if (std::chrono::steady_clock::now() > deadline_) {
      end_setup(Status(MPI_ERR_OTHER, "NCCL communicator not initialised within " + nccl_timeout_text()));
      return true;
    }
  }
  return false;
}

void NcclComm::start_init_on_side() {
  side_handle_ = std::make_shared<ncclComm_t>(nullptr);
  const std::shared_ptr<ncclComm_t> slot = side_handle_;
  const int device_ordinal = device, nranks = size, me = rank;
  const int blocking = inline_launch ? 1 : 0;
  const ncclUniqueId id = shared_.id;
  // Not under the launch lock, nor on the caller: a blocking setup waits for every member to come,
  // and may do so while this process launches on other communicators (as NCCL's own nonblocking
  // setup thread does). A nonblocking one returns before it needs a peer, but makes a page-locked
  // allocation on its way (NCCL's abort flag), which the CUDA guide lets wait for the kernels in
  // flight, some of them maybe waiting for peers that need this process's next launch.
  side_.start([slot, device_ordinal, nranks, me, id, blocking] {
    device::DeviceGuard guard(device_ordinal);
    ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
    nccl_config.blocking = blocking;
    const ncclResult_t rc = nccl_api()->CommInitRankConfig(slot.get(), nranks, id, me, &nccl_config);
    return rc == ncclInProgress ? ncclSuccess : rc;  // nonblocking: the rest is polled on the handle
  });
  phase_ = Phase::initializing;
}

bool NcclComm::connected(const std::vector<int>& to, const std::vector<int>& from) {
  std::lock_guard<std::mutex> lock(connections_mutex_);
  auto open = [](const std::vector<char>& opened, const std::vector<int>& peers) {
    return std::all_of(peers.begin(), peers.end(), [&](int peer) { return opened[static_cast<std::size_t>(peer)] != 0; });
  };
  return open(sends_open_, to) && open(receives_open_, from);
}

std::vector<int> NcclComm::everyone_else() const {
  std::vector<int> peers;
  peers.reserve(static_cast<std::size_t>(size));
  for (int peer = 0; peer < size; ++peer) {
    if (peer != rank) peers.push_back(peer);
  }
  return peers;
}

ncclResult_t NcclComm::issue_on_side(const std::vector<int>& to, const std::vector<int>& from,
                                     std::function<ncclResult_t()> calls) {
  {
    std::lock_guard<std::mutex> lock(connections_mutex_);
    side_launch_ = true;
    side_to_ = to;
    side_from_ = from;
  }
  const int device_ordinal = device;
  // Not under the launch lock: connecting waits for the peers' matching launches.
  side_.start([calls = std::move(calls), device_ordinal] {
    device::DeviceGuard guard(device_ordinal);
    return calls();
  });
  return ncclInProgress;
}

ncclResult_t NcclComm::issue_transfers(const std::vector<NcclTransfer>& group) {
  const ncclComm_t comm = handle;
  const cudaStream_t on = stream.get();
  auto issue = [comm, on](const std::vector<NcclTransfer>& transfers) {
    const NcclApi& nccl = *nccl_api();
    NcclGroup grouped(nccl);
    ncclResult_t rc = grouped.start();
    for (const NcclTransfer& t : transfers) {
      if (rc != ncclSuccess && rc != ncclInProgress) return rc;  // the group is closed by its guard
      rc = t.send ? nccl.Send(t.data, t.bytes, ncclUint8, t.peer, comm, on)
                  : nccl.Recv(t.data, t.bytes, ncclUint8, t.peer, comm, on);
    }
    return rc == ncclSuccess || rc == ncclInProgress ? grouped.end() : rc;
  };
  if (!inline_launch) return issue(group);
  std::vector<int> to, from;
  for (const NcclTransfer& t : group) (t.send ? to : from).push_back(t.peer);
  if (connected(to, from)) return issue(group);
  return issue_on_side(to, from, [issue, group] { return issue(group); });  // a copy: the side thread's
}

ncclResult_t NcclComm::enqueue_state() {
  {
    std::lock_guard<std::mutex> lock(connections_mutex_);
    if (side_launch_) {
      if (side_.busy()) return ncclInProgress;
      side_launch_ = false;
      const ncclResult_t result = side_.result();
      if (result != ncclSuccess) return result;
      for (int peer : side_to_) sends_open_[static_cast<std::size_t>(peer)] = 1;
      for (int peer : side_from_) receives_open_[static_cast<std::size_t>(peer)] = 1;
    }
  }
  return pending_state(handle);
}

void NcclComm::launch_queued() {
  for (;;) {
    QueuedLaunch* work = nullptr;
    Status setup;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool setup_over = phase_ == Phase::ready || phase_ == Phase::failed;
      if (!setup_over || launching_ || enqueuing_ != nullptr || queued_.empty()) return;
      work = queued_.front();
      queued_.pop_front();
      launching_ = true;
      setup = failure_;
    }
    // Outside the lock: a launch packs buffers and polls MPI progress on the way.
    const bool still_enqueuing = work->launch(setup);
    std::lock_guard<std::mutex> lock(mutex_);
    launching_ = false;
    if (still_enqueuing) enqueuing_ = work;
  }
}

bool NcclComm::advance() {
  QueuedLaunch* enqueued = nullptr;
  Status enqueue_result;
  bool setup_timed_out = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    setup_timed_out = step_setup();
    if (enqueuing_ != nullptr) {
      const ncclResult_t state = enqueue_state();
      if (state != ncclInProgress) {
        if (state != ncclSuccess) {
          broken = true;
          enqueue_result = nccl_failure("enqueueing NCCL work", state, handle);
        }
        enqueued = enqueuing_;
        enqueuing_ = nullptr;
        // The launch turn stays taken until enqueued() has put its last stream work (the event
        // that completes it) behind the NCCL work: launched earlier, the next call's kernel would
        // come first on the stream and this call would complete only after it, that is after peers
        // that may be waiting for this one.
        launching_ = true;
      }
    }
  }
  if (setup_timed_out) report_setup_timeout();  // without the lock
  if (enqueued != nullptr) {
    // Marked broken above, under the lock, so nothing launches behind it; stopped here, without it.
    if (!enqueue_result.ok()) fail(enqueue_result);
    enqueued->enqueued(enqueue_result);
    std::lock_guard<std::mutex> lock(mutex_);
    launching_ = false;
  }
  launch_queued();
  return idle();
}

Status NcclComm::wait_setup(device::ProgressHook& progress) {
  for (;;) {
    bool timed_out = false;
    Status failure;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      timed_out = step_setup();
      if (phase_ == Phase::ready) return {};
      if (phase_ == Phase::failed) failure = failure_;
    }
    if (!failure.ok()) {
      if (timed_out) report_setup_timeout();  // without the lock
      return failure;
    }
    MCRP_TRY(progress.poll());
  }
}

void NcclComm::report_setup_timeout() {
  report_library_state("NCCL communicator #" + std::to_string(serial) + " not initialised within " +
                       nccl_timeout_text());
}

std::string NcclComm::describe() {
  std::string text = "NCCL communicator #" + std::to_string(serial) + ": rank " + std::to_string(rank) + " of " +
                     std::to_string(size) + ", device " + std::to_string(device) + ", " +
                     (inline_launch ? "blocking" : "nonblocking");
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return text + "; its state locked by another thread";
  static const char* const kPhases[] = {"exchanging NCCL's unique id", "being set up by NCCL", "ready", "failed"};
  text += std::string("; ") + kPhases[static_cast<int>(phase_)];
  if (phase_ == Phase::ready && broken) text += stopped_ ? ", stopped after a failure" : ", failed";
  if (side_.busy()) {
    std::unique_lock<std::mutex> connections(connections_mutex_, std::try_to_lock);
    if (!connections.owns_lock()) {
      text += "; its thread busy";
    } else {
      text += side_launch_ ? "; its thread in a launch that connects peers" : "; its thread in NCCL's setup call";
    }
  }
  if (launching_) text += "; a launch under way";
  if (enqueuing_ != nullptr) {
    text += "; a launch being enqueued by NCCL";
    if (!inline_launch && handle != nullptr)
      text += pending_state(handle) == ncclInProgress ? " (still in progress)" : " (ended)";
  }
  if (!queued_.empty()) text += "; queued launches: " + std::to_string(queued_.size());
  if (phase_ == Phase::ready && !broken) {
    device::DeviceGuard guard(device);
    text += device::stream_busy(stream.get()) ? "; work on its stream" : "; its stream idle";
  }
  return text;
}

std::vector<NcclCommState> nccl_comm_states() {
  std::vector<NcclCommState> states;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (NcclComm* comm : g_live) states.push_back(NcclCommState{comm, comm->serial, comm->describe()});
  std::sort(states.begin(), states.end(),
            [](const NcclCommState& a, const NcclCommState& b) { return a.serial < b.serial; });
  return states;
}

bool NcclComm::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool setup_over = phase_ == Phase::ready || phase_ == Phase::failed;
  return setup_over && enqueuing_ == nullptr && queued_.empty() && !launching_;
}

Status NcclComm::fail(const Status& why) {
  broken = true;
  device::note_abandoned_work();  // its kernels may outlive the calls that fail now
  if (stopped_.exchange(true)) return why;
  bool ready = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready = phase_ == Phase::ready;  // a communicator still being set up has nothing to stop
  }
  const NcclApi* nccl = nccl_api();
  // Not while the side thread is inside NCCL on this communicator: aborted once it is out (~NcclComm).
  if (ready && nccl != nullptr && nccl->CommRevoke != nullptr && !side_.busy()) {
    NcclLaunchLock lock;
    device::DeviceGuard guard(device);
    nccl->CommRevoke(handle, 0);
  }
  log_debug("NCCL communicator stopped after a failure: ", rank, size, why.message());
  return why;
}

Status NcclComm::completion() const {
  if (!broken) return {};
  return Status(MPI_ERR_OTHER, "the NCCL communicator was stopped by a failure while this call ran");
}

bool NcclComm::begin_direct() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ != Phase::ready || broken || launching_ || enqueuing_ != nullptr || !queued_.empty()) return false;
  launching_ = true;
  return true;
}

void NcclComm::end_direct() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    launching_ = false;
  }
  launch_queued();
}

Status NcclComm::wait_enqueued(device::ProgressHook& progress) {
  profile::StepTimer waiting(profile::Step::wait);
  return wait_not_in_progress([this] { return enqueue_state(); }, handle, "enqueueing NCCL work", progress);
}

Status NcclComm::submit(QueuedLaunch* work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.push_back(work);
  }
  mark_busy(shared_from_this());  // after queueing: a concurrent advance_nccl_comms cannot drop it
  launch_queued();
  return {};
}

void NcclComm::withdraw(QueuedLaunch* work) {
  std::lock_guard<std::mutex> lock(mutex_);
  queued_.erase(std::remove(queued_.begin(), queued_.end(), work), queued_.end());
  if (enqueuing_ == work) enqueuing_ = nullptr;
}

Status nccl_comm_for(MPI_Comm comm, int device, std::shared_ptr<NcclComm>* out) {
  profile::StepTimer looking_up(profile::Step::queue);
  // Before this call's launch: in a program that waits for each call, the moment nothing is in
  // flight (the polls of a call's own wait all come while its kernel runs).
  tear_down_retired_when_quiet();
  out->reset();
  thread_local CachedCommAttribute cached;
  void* value = cached.find(comm, keyval());
  if (value == nullptr) {
    auto* entry = new CommEntry{std::make_shared<NcclComm>(comm, device)};
    PMPI_Comm_set_attr(comm, keyval(), entry);
    mark_busy(entry->nccl);  // its setup
    value = entry;
  }
  const std::shared_ptr<NcclComm>& nccl = static_cast<CommEntry*>(value)->nccl;
  // A call whose buffers are on another device than the communicator's still runs on it: its
  // device views copy them over (collectives/device_view.h), so no rank fails alone.
  if (nccl->broken) return Status(MPI_ERR_OTHER, "the NCCL communicator was aborted after an earlier failure");
  *out = nccl;
  return {};
}

void advance_nccl_comms() {
  tear_down_retired_when_quiet();
  if (g_busy_count.load(std::memory_order_acquire) == 0 || t_advancing) return;
  t_advancing = true;
  std::vector<std::shared_ptr<NcclComm>> busy;
  {
    std::lock_guard<std::mutex> lock(g_busy_mutex);
    busy = g_busy;
  }
  for (const auto& comm : busy) {
    if (!comm->advance()) continue;
    std::lock_guard<std::mutex> lock(g_busy_mutex);
    if (!comm->idle()) continue;  // work submitted meanwhile (submit marks busy after queueing)
    g_busy.erase(std::remove(g_busy.begin(), g_busy.end(), comm), g_busy.end());
    g_busy_count.store(static_cast<int>(g_busy.size()), std::memory_order_release);
  }
  t_advancing = false;
}

Status settle(NcclComm& comm, ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return {};
  if (result == ncclInProgress) {
    MpiProgress progress("NCCL to enqueue work", &comm);
    return wait_not_in_progress([&comm] { return pending_state(comm.handle); }, comm.handle, what, progress);
  }
  return nccl_failure(what, result, comm.handle);
}

void release_world_nccl_comm() {
  // Out of the list under the lock, released after it: the last reference may be this list's, and
  // ~NcclComm must run outside the lock (before the teardown was moved out of it, it polled
  // progress, which takes this lock again: gpu.p2p.idle_member hung in MPI_Finalize).
  std::vector<std::shared_ptr<NcclComm>> released_busy;
  {
    std::lock_guard<std::mutex> lock(g_busy_mutex);
    released_busy.swap(g_busy);
    g_busy_count.store(0, std::memory_order_release);
  }
  released_busy.clear();
  static bool released = false;
  if (released || !g_keyval_made.load(std::memory_order_acquire)) return;  // no NCCL communicator was ever made
  released = true;
  int found = 0;
  void* value = nullptr;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval(), &value, &found);
  if (found) PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval());
  tear_down_all_retired();
}

}  // namespace mcrp
