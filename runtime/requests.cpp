#include "runtime/requests.h"

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device/buffer_pool.h"
#include "runtime/errors.h"
#include "runtime/handle_holds.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/progress_thread.h"
#include "runtime/wait_notes.h"

namespace mcrp {
namespace {

// What MPI hands back to the callbacks, shared by MPI's reference (the callbacks' extra state) and
// the library's lists of requests to advance, so neither outlives the other's use.
//
// Locking rule: MPICH calls the free and cancel callbacks (and MPI_Wait the query one) holding its
// own global lock, while advancing an op calls back into MPI (tests, sends, status setters) and so
// waits for that lock. The callbacks therefore never wait for anything the advancing thread holds:
// they flip atomics and touch only the short list locks below, which are never held across an MPI
// call. The op itself is only ever try-locked: a thread that finds it busy moves on.
struct Generalized {
  std::mutex mutex;                    // held while advancing the op
  std::unique_ptr<AsyncOp> op;         // null once finished: buffers are released before completion
  HandleHolds holds;                   // the datatypes `op` may read, released when it has finished
  std::atomic<bool> finished{false};   // op is null and the request completed towards MPI
  std::atomic<bool> cancel_asked{false};
  std::atomic<bool> freed{false};      // MPI's reference went while the op was in flight
  MPI_Request handle = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  const char* call = "";
  int error = MPI_SUCCESS;  // what Wait/Test report for this request
  MPI_Status status{};      // filled before completion, read by query after it
};
using Shared = std::shared_ptr<Generalized>;

// Requests whose op is in flight: advanced by every library progress (advance_live_requests), not
// only when the base MPI polls them, since some of the base MPI's calls never do (MPICH's
// MPI_Request_get_status) and a protocol op may owe a peer an answer. Requests the application
// freed while active stay here until their op finishes.
std::mutex g_live_mutex;
std::unordered_map<Generalized*, Shared> g_live;
std::atomic<int> g_live_count{0};
std::mutex g_advancing;  // one thread walks the list at a time

// Requests MPI holds a reference to (from start to the free callback), any of which may have
// failed (library_failure_possible); and the failures the base MPI completed in this thread's
// current Wait/Test call: MPICH calls the query callback from the completing call, in the calling
// thread, just before the free callback. A handful at most: a call's array, or what calls that
// never asked left (bounded below).
std::atomic<int> g_mpi_references{0};
struct CompletedFailure {
  MPI_Request handle;
  int error;
};
thread_local std::vector<CompletedFailure> t_completed_failures;
constexpr std::size_t kCompletedFailuresKept = 256;

void update_live_count() { g_live_count.store(static_cast<int>(g_live.size()), std::memory_order_release); }

void add_live(const Shared& g) {
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.emplace(g.get(), g);
    update_live_count();
  }
  // Requests in flight are work a peer may wait for (runtime/progress.h, background_work_pending):
  // where the program runs at MPI_THREAD_MULTIPLE, the helper thread advances them while the program
  // sits in a blocking call of the base MPI (a fresh communicator's NCCL setup, a launch queued
  // behind it). Started once; it stops in MPI_Finalize.
  static const bool helper_asked = (start_progress_thread(), true);
  (void)helper_asked;
}

void forget_live(Generalized* g) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  if (g_live.erase(g) != 0) update_live_count();
}

void fill_empty_status(MPI_Status* status) {
  PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
}

Generalized* from_state(void* state) { return static_cast<Shared*>(state)->get(); }

int query(void* state, MPI_Status* status) {
  const Generalized* g = from_state(state);
  *status = g->status;  // written before MPI_Grequest_complete, never after
  status->MPI_ERROR = g->error;
  if (g->error != MPI_SUCCESS) {
    if (t_completed_failures.size() >= kCompletedFailuresKept) t_completed_failures.clear();
    t_completed_failures.push_back({g->handle, g->error});
  }
  return g->error;
}

// Advances g's op unless another thread is at it; true when the op has finished (now or before).
// A finished op is completed towards MPI exactly once.
bool advance(Generalized* g) {
  if (g->finished.load(std::memory_order_acquire)) return true;
  std::unique_lock<std::mutex> lock(g->mutex, std::try_to_lock);
  if (!lock.owns_lock() || !g->op) return g->finished.load(std::memory_order_acquire);
  if (g->cancel_asked.exchange(false, std::memory_order_acq_rel)) g->op->cancel();
  bool done = false;
  const Status status = g->op->progress(&done);
  if (!status.ok()) {
    if (g->op->left_device_work()) device::note_abandoned_work();  // its blocks are then not reused
    g->error = raise_error(g->comm, g->call, 0, status);
    done = true;
  }
  if (!done) return false;
  g->op->fill_status(&g->status);
  g->op.reset();
  HandleHolds released = std::move(g->holds);  // after the lock: a free it puts off may run now
  g->finished.store(true, std::memory_order_release);
  lock.unlock();
  PMPI_Grequest_complete(g->handle);
  return true;
}

// MPI's reference goes. An op still in flight (MPI_Request_free on an active request) stays in the
// live list, which finishes it from the library's progress and then drops it.
int release(void* state) {
  auto* shared = static_cast<Shared*>(state);
  g_mpi_references.fetch_sub(1, std::memory_order_acq_rel);
  if ((*shared)->finished.load(std::memory_order_acquire)) {
    forget_live(shared->get());
  } else {
    (*shared)->freed.store(true, std::memory_order_release);
  }
  delete shared;
  return MPI_SUCCESS;
}

int cancel(void* state, int complete) {
  if (!complete) from_state(state)->cancel_asked.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}

int poll(void* state, MPI_Status*) {
  advance_library();  // NCCL setups, protocol engines, other requests: not only this one
  advance(from_state(state));
  // MPICH 4.0.2 (ch4:ucx) waits for a request of this kind (MPI_Wait on one alone) without
  // advancing its network module: this rank's base-MPI sends above the eager size would not move
  // while it waits (tests/mpi/test_progress_while_waiting.cpp).
  drive_mpi_progress();
  return MPI_SUCCESS;
}

// MPICH requires a wait function (it rejects a null one) and calls it from MPI_Wait* for requests of
// this kind. It returns once every op given has completed, polling them (each poll drives the base
// MPI's progress); the ops complete on their own (GPU events, inner base-MPI requests they test
// themselves), so waiting for all of them cannot block on the caller.
int wait_all(int count, void** states, double, MPI_Status* status) {
  WaitNote note("MPI_Wait on the library's requests (the base MPI's wait)", nullptr);
  for (;;) {
    bool all_done = true;
    for (int i = 0; i < count; ++i) {
      poll(states[i], status);
      all_done = all_done && from_state(states[i])->finished.load(std::memory_order_acquire);
    }
    if (all_done) return MPI_SUCCESS;
    note.polled();
  }
}

// Whether an op in flight is one `wanted` picks.
template <typename Wanted>
bool in_flight(Wanted wanted) {
  if (g_live_count.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (const auto& entry : g_live) {
    const Generalized& g = *entry.second;
    if (!g.finished.load(std::memory_order_acquire) && wanted(g)) return true;
  }
  return false;
}

// Advances the library and the base MPI until no op `wanted` picks is in flight.
template <typename Wanted>
void finish_in_flight(Wanted wanted) {
  while (in_flight(wanted)) {
    advance_library();  // the ops, and what they may need: protocol engines, NCCL setups
    drive_mpi_progress();
  }
}

// MPIX_Grequest_start with the library's callbacks; `mpi_reference` is MPI's from then on.
int start_base_request(Shared* mpi_reference, MPI_Request* request) {
  const int rc = PMPIX_Grequest_start(query, release, cancel, poll, wait_all, mpi_reference, request);
  if (rc == MPI_SUCCESS) g_mpi_references.fetch_add(1, std::memory_order_acq_rel);
  return rc;
}

}  // namespace

void AsyncOp::fill_status(MPI_Status* status) const { fill_empty_status(status); }

Status start_generalized(std::unique_ptr<AsyncOp> op, MPI_Comm comm, const char* call,
                         std::initializer_list<MPI_Datatype> datatypes, MPI_Request* request) {
  profile::StepTimer making_request(profile::Step::finish);
  auto g = std::make_shared<Generalized>();
  g->comm = comm;
  g->call = call;
  g->holds = HandleHolds::of(MPI_COMM_NULL, datatypes);  // no communicator: see runtime/handle_holds.h
  auto* mpi_reference = new Shared(g);
  // Hold the op's lock until the handle is known, so no poll can complete an unnamed request.
  std::unique_lock<std::mutex> lock(g->mutex);
  g->op = std::move(op);
  const int rc = start_base_request(mpi_reference, &g->handle);
  if (rc != MPI_SUCCESS) {
    delete mpi_reference;
    *request = MPI_REQUEST_NULL;
    return already_raised(rc);
  }
  *request = g->handle;
  lock.unlock();
  add_live(g);
  return {};
}

Status start_completed(MPI_Request* request) {
  profile::StepTimer making_request(profile::Step::finish);
  auto* mpi_reference = new Shared(std::make_shared<Generalized>());
  Generalized* g = mpi_reference->get();
  fill_empty_status(&g->status);
  g->finished.store(true, std::memory_order_release);
  const int rc = start_base_request(mpi_reference, request);
  if (rc != MPI_SUCCESS) {
    delete mpi_reference;
    *request = MPI_REQUEST_NULL;
    return already_raised(rc);
  }
  PMPI_Grequest_complete(*request);
  return {};
}

bool library_failure_possible() {
  return g_mpi_references.load(std::memory_order_acquire) != 0;
}

void forget_completed_failures() { t_completed_failures.clear(); }

int completed_failure(MPI_Request handle) {
  for (const CompletedFailure& failure : t_completed_failures) {
    if (failure.handle == handle) return failure.error;
  }
  return MPI_SUCCESS;
}

int live_request_count() { return g_live_count.load(std::memory_order_acquire); }

std::string describe_live_requests() {
  std::map<std::string, int> by_call;
  int total = 0;
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    for (const auto& entry : g_live) {
      ++by_call[entry.first->call];
      ++total;
    }
  }
  if (total == 0) return "none";
  std::string text = std::to_string(total) + " (";
  for (const auto& [call, count] : by_call) {
    text += (text.back() == '(' ? "" : ", ") + call + " " + std::to_string(count);
  }
  return text + ")";
}

void advance_live_requests() {
  if (g_live_count.load(std::memory_order_acquire) == 0) return;
  // One thread at a time, and never from inside an op this loop advances.
  static thread_local bool advancing = false;
  if (advancing) return;
  std::unique_lock<std::mutex> walker(g_advancing, std::try_to_lock);
  if (!walker.owns_lock()) return;
  advancing = true;
  std::vector<Shared> live;
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    live.reserve(g_live.size());
    for (const auto& entry : g_live) live.push_back(entry.second);
  }
  std::vector<Generalized*> finished;
  for (const Shared& g : live) {
    if (advance(g.get())) finished.push_back(g.get());
  }
  if (!finished.empty()) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    for (Generalized* g : finished) g_live.erase(g);
    update_live_count();
  }
  advancing = false;
}

void note_freed(MPI_Request handle) {
  if (g_live_count.load(std::memory_order_acquire) == 0 || handle == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (const auto& entry : g_live) {
    Generalized& g = *entry.second;
    if (g.handle == handle && !g.finished.load(std::memory_order_acquire)) g.freed.store(true, std::memory_order_release);
  }
}

void finish_freed_requests() {
  finish_in_flight([](const Generalized& g) { return g.freed.load(std::memory_order_acquire); });
}

void finish_requests_on(MPI_Comm comm) {
  finish_in_flight([comm](const Generalized& g) { return g.comm == comm; });
}

}  // namespace mcrp
