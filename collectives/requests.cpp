#include "collectives/requests.h"

#include <mutex>
#include <utility>

#include "collectives/errors.h"
#include "collectives/nccl_comm.h"
#include "collectives/progress.h"
#include "device/cuda_runtime.h"

namespace mcrp {
namespace {

// What MPI hands back to the callbacks. The mutex serializes polls from several threads (under
// MPI_THREAD_MULTIPLE two Waitsome calls may poll the same request).
struct Generalized {
  std::mutex mutex;
  std::unique_ptr<AsyncOp> op;  // null once finished: buffers are released before completion
  MPI_Request handle = MPI_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  CollKind kind = CollKind::barrier;
  int error = MPI_SUCCESS;  // what Wait/Test report for this request
};

// Collective requests carry no source, tag or element count of their own.
int query(void* state, MPI_Status* status) {
  auto* g = static_cast<Generalized*>(state);
  PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = g->error;
  return g->error;
}

int release(void* state) {
  delete static_cast<Generalized*>(state);
  return MPI_SUCCESS;
}

// A started collective cannot be withdrawn; MPI allows cancel to have no effect.
int cancel(void*, int) { return MPI_SUCCESS; }

int poll(void* state, MPI_Status*) {
  advance_nccl_comms();  // any communicator's, not only this request's (nccl_comm.h)
  auto* g = static_cast<Generalized*>(state);
  std::lock_guard<std::mutex> lock(g->mutex);
  if (!g->op) return MPI_SUCCESS;  // already completed
  bool done = false;
  const Status status = g->op->progress(&done);
  if (!status.ok()) {
    g->error = raise_error(g->comm, g->kind, 0, status);
    done = true;
  }
  if (!done) return MPI_SUCCESS;
  g->op.reset();
  PMPI_Grequest_complete(g->handle);
  return MPI_SUCCESS;
}

// MPICH requires a wait function (it rejects a null one) and calls it from MPI_Wait* for requests of
// this kind. It returns once every op given has completed, polling them and driving the base MPI's
// progress in between (guarantee 3); the ops complete on their own (GPU events, inner base-MPI
// requests they test themselves), so waiting for all of them cannot block on the caller.
int wait_all(int count, void** states, double, MPI_Status* status) {
  for (;;) {
    bool all_done = true;
    for (int i = 0; i < count; ++i) {
      auto* g = static_cast<Generalized*>(states[i]);
      poll(g, status);
      std::lock_guard<std::mutex> lock(g->mutex);
      all_done = all_done && !g->op;
    }
    if (all_done) return MPI_SUCCESS;
    drive_mpi_progress();
  }
}

}  // namespace

Status start_generalized(std::unique_ptr<AsyncOp> op, MPI_Comm comm, CollKind kind, MPI_Request* request) {
  auto* g = new Generalized;
  g->comm = comm;
  g->kind = kind;
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
  const int rc = PMPIX_Grequest_start(query, release, cancel, poll, wait_all, g, request);
  if (rc != MPI_SUCCESS) {
    delete g;
    *request = MPI_REQUEST_NULL;
    return already_raised(rc);
  }
  PMPI_Grequest_complete(*request);
  return {};
}

}  // namespace mcrp
