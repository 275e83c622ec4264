#include "runtime/requests.h"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/nccl_comm.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

// What MPI hands back to the callbacks. The mutex serializes polls from several threads (under
// MPI_THREAD_MULTIPLE two Waitsome calls may poll the same request).
struct Generalized {
  std::mutex mutex;
  std::unique_ptr<AsyncOp> op;  // null once finished: buffers are released before completion
  MPI_Request handle = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  const char* call = "";
  int error = MPI_SUCCESS;  // what Wait/Test report for this request
  MPI_Status status{};      // filled by the op when it finishes
  bool freed = false;       // the application freed the handle: delete once finished
};

// Requests the application freed while their op still ran; finished by advance_detached_requests.
std::mutex g_detached_mutex;
std::vector<Generalized*> g_detached;
std::atomic<int> g_detached_count{0};

void fill_empty_status(MPI_Status* status) {
  PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
}

int query(void* state, MPI_Status* status) {
  auto* g = static_cast<Generalized*>(state);
  std::lock_guard<std::mutex> lock(g->mutex);
  *status = g->status;
  status->MPI_ERROR = g->error;
  return g->error;
}

// Advances g's op under its lock; true when the op has finished (now or before). A finished op is
// completed towards MPI exactly once.
bool advance(Generalized* g) {
  std::lock_guard<std::mutex> lock(g->mutex);
  if (!g->op) return true;
  bool done = false;
  const Status status = g->op->progress(&done);
  if (!status.ok()) {
    g->error = raise_error(g->comm, g->call, 0, status);
    done = true;
  }
  if (!done) return false;
  g->op->fill_status(&g->status);
  g->op.reset();
  PMPI_Grequest_complete(g->handle);
  return true;
}

int release(void* state) {
  auto* g = static_cast<Generalized*>(state);
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    if (g->op) {
      // Freed while active: the op goes on under the library's own progress.
      g->freed = true;
      std::lock_guard<std::mutex> detached(g_detached_mutex);
      g_detached.push_back(g);
      g_detached_count.store(static_cast<int>(g_detached.size()), std::memory_order_release);
      return MPI_SUCCESS;
    }
  }
  delete g;
  return MPI_SUCCESS;
}

int cancel(void* state, int complete) {
  auto* g = static_cast<Generalized*>(state);
  std::lock_guard<std::mutex> lock(g->mutex);
  if (!complete && g->op) g->op->cancel();
  return MPI_SUCCESS;
}

int poll(void* state, MPI_Status*) {
  advance_nccl_comms();  // any communicator's, not only this request's (nccl_comm.h)
  advance_detached_requests();
  advance(static_cast<Generalized*>(state));
  return MPI_SUCCESS;
}

// MPICH requires a wait function (it rejects a null one) and calls it from MPI_Wait* for requests of
// this kind. It returns once every op given has completed, polling them and driving the base MPI's
// progress in between; the ops complete on their own (GPU events, inner base-MPI requests they test
// themselves), so waiting for all of them cannot block on the caller.
int wait_all(int count, void** states, double, MPI_Status* status) {
  for (;;) {
    bool all_done = true;
    for (int i = 0; i < count; ++i) {
      poll(states[i], status);
      auto* g = static_cast<Generalized*>(states[i]);
      std::lock_guard<std::mutex> lock(g->mutex);
      all_done = all_done && !g->op;
    }
    if (all_done) return MPI_SUCCESS;
    drive_mpi_progress();
  }
}

}  // namespace

void AsyncOp::fill_status(MPI_Status* status) const { fill_empty_status(status); }

Status start_generalized(std::unique_ptr<AsyncOp> op, MPI_Comm comm, const char* call, MPI_Request* request) {
  auto* g = new Generalized;
  g->comm = comm;
  g->call = call;
  // Hold the lock until the handle is known, so no poll can complete an unnamed request.
  std::unique_lock<std::mutex> lock(g->mutex);
  g->op = std::move(op);
  const int rc = PMPIX_Grequest_start(query, release, cancel, poll, wait_all, g, &g->handle);
  if (rc != MPI_SUCCESS) {
    lock.unlock();
    delete g;
    *request = MPI_REQUEST_NULL;
    return already_raised(rc);
  }
  *request = g->handle;
  return {};
}

Status start_completed(MPI_Request* request) {
  auto* g = new Generalized;
  fill_empty_status(&g->status);
  const int rc = PMPIX_Grequest_start(query, release, cancel, poll, wait_all, g, request);
  if (rc != MPI_SUCCESS) {
    delete g;
    *request = MPI_REQUEST_NULL;
    return already_raised(rc);
  }
  PMPI_Grequest_complete(*request);
  return {};
}

void advance_detached_requests() {
  if (g_detached_count.load(std::memory_order_acquire) == 0) return;
  // Taken out of the list while advanced: an op's progress may poll the library's progress, which
  // comes back here (and finds nothing to do) or lets another thread detach more.
  std::vector<Generalized*> pending;
  {
    std::lock_guard<std::mutex> lock(g_detached_mutex);
    pending.swap(g_detached);
    g_detached_count.store(0, std::memory_order_release);
  }
  std::vector<Generalized*> unfinished;
  for (Generalized* g : pending) {
    if (advance(g)) {
      delete g;  // MPI released its side when the request completed
    } else {
      unfinished.push_back(g);
    }
  }
  if (unfinished.empty()) return;
  std::lock_guard<std::mutex> lock(g_detached_mutex);
  g_detached.insert(g_detached.end(), unfinished.begin(), unfinished.end());
  g_detached_count.store(static_cast<int>(g_detached.size()), std::memory_order_release);
}

}  // namespace mcrp
