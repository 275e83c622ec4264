#include "runtime/wait_family.h"

#include <algorithm>
#include <vector>

#include "runtime/persistent.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

bool bad_array(int count, const MPI_Request requests[]) { return count < 0 || (count > 0 && requests == nullptr); }

// The array as the base MPI's Wait/Test calls over arrays should see it: registered persistent
// handles that are inactive or whose operation still runs replaced by MPI_REQUEST_NULL (for which
// the base MPI reports the empty status an inactive request has). completed(i) then records what
// the base MPI completed and copies it back.
class MaskedArray {
 public:
  MaskedArray(int count, MPI_Request requests[]) : requests_(requests), view_(requests, requests + count), masked_(count, 0) {
    for (int i = 0; i < count && rc_ == MPI_SUCCESS; ++i) {
      bool hide = false, running = false;
      rc_ = hide_from_base(requests[i], &hide, &running);
      if (hide) {
        masked_[i] = 1;
        view_[i] = MPI_REQUEST_NULL;
      }
      any_running_ = any_running_ || running;
    }
  }
  // The base MPI completed element i of the view, and wrote its status to *status.
  void completed(int i, MPI_Status* status) {
    mark_completed(requests_[i], status);
    requests_[i] = view_[i];
  }
  // The base MPI completed the whole view (Waitall): the hidden elements stay as they were.
  void all_completed(MPI_Status statuses[]) {
    for (int i = 0; i < static_cast<int>(masked_.size()); ++i) {
      if (!masked_[i]) completed(i, statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
    }
  }
  MPI_Request* view() { return view_.data(); }
  // "No active request" is not true while a hidden collective still runs.
  bool any_running() const { return any_running_; }
  int error() const { return rc_; }

 private:
  MPI_Request* requests_;
  std::vector<MPI_Request> view_;
  std::vector<char> masked_;
  bool any_running_ = false;
  int rc_ = MPI_SUCCESS;
};

int wait_every_device_work(int count, const MPI_Request requests[]) {
  int first_error = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const int rc = wait_device_work(requests[i]);
    if (first_error == MPI_SUCCESS) first_error = rc;
  }
  return first_error;
}

// While the library has background work that a peer may be waiting for (a point-to-point
// clear-to-send), a wait must not block inside the base MPI: it polls its test form and advances
// the library in between.
template <class Test>
int poll_until(Test&& test) {
  for (;;) {
    int done = 0;
    const int rc = test(&done);
    if (rc != MPI_SUCCESS || done) return rc;
    advance_library();
    drive_mpi_progress();
  }
}

}  // namespace

int wait_polling(MPI_Request* request, MPI_Status* status) {
  return poll_until([&](int* done) { return test_one(request, done, status); });
}

int wait_one(MPI_Request* request, MPI_Status* status) {
  if (background_work_pending() && request != nullptr) return wait_polling(request, status);
  if (!persistent_requests_exist() || request == nullptr) return PMPI_Wait(request, status);
  if (report_inactive(*request, status)) return MPI_SUCCESS;
  const MPI_Request handle = *request;
  const int device_rc = wait_device_work(handle);
  const int rc = PMPI_Wait(request, status);
  if (rc == MPI_SUCCESS) mark_completed(handle, status);
  return device_rc != MPI_SUCCESS ? device_rc : rc;
}

int wait_all(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (background_work_pending() && !bad_array(count, requests)) {
    return poll_until([&](int* done) { return test_all(count, requests, done, statuses); });
  }
  if (!persistent_requests_exist() || bad_array(count, requests)) return PMPI_Waitall(count, requests, statuses);
  // Waiting for the device work first is safe: the base MPI keeps progressing meanwhile, and no
  // other request's completion is needed for it to finish.
  const int device_rc = wait_every_device_work(count, requests);
  MaskedArray masked(count, requests);  // nothing runs any more: hides the inactive handles
  const int rc = PMPI_Waitall(count, masked.view(), statuses);
  masked.all_completed(statuses);
  return device_rc != MPI_SUCCESS ? device_rc : rc;
}

int test_one(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!persistent_requests_exist() || request == nullptr || flag == nullptr) return PMPI_Test(request, flag, status);
  if (report_inactive(*request, status)) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  const MPI_Request handle = *request;
  bool running = false;
  int rc = test_device_work(handle, &running);
  if (rc != MPI_SUCCESS) return rc;
  if (running) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  rc = PMPI_Test(request, flag, status);
  if (rc == MPI_SUCCESS && *flag) mark_completed(handle, status);
  return rc;
}

int test_any(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!persistent_requests_exist() || bad_array(count, requests) || index == nullptr || flag == nullptr) {
    return PMPI_Testany(count, requests, index, flag, status);
  }
  MaskedArray masked(count, requests);
  if (masked.error() != MPI_SUCCESS) return masked.error();
  const int rc = PMPI_Testany(count, masked.view(), index, flag, status);
  if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) masked.completed(*index, status);
  if (*flag && *index == MPI_UNDEFINED && masked.any_running()) *flag = 0;
  return rc;
}

int test_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!persistent_requests_exist() || bad_array(count, requests) || outcount == nullptr) {
    return PMPI_Testsome(count, requests, outcount, indices, statuses);
  }
  MaskedArray masked(count, requests);
  if (masked.error() != MPI_SUCCESS) return masked.error();
  const int rc = PMPI_Testsome(count, masked.view(), outcount, indices, statuses);
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED) {
    for (int k = 0; k < *outcount; ++k) {
      masked.completed(indices[k], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k]);
    }
  }
  if (*outcount == MPI_UNDEFINED && masked.any_running()) *outcount = 0;
  return rc;
}

int wait_any(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (background_work_pending() && !bad_array(count, requests) && index != nullptr) {
    return poll_until([&](int* done) { return test_any(count, requests, index, done, status); });
  }
  if (!persistent_requests_exist() || bad_array(count, requests) || index == nullptr) {
    return PMPI_Waitany(count, requests, index, status);
  }
  for (;;) {
    int flag = 0;
    const int rc = test_any(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    drive_mpi_progress();
  }
}

int wait_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (background_work_pending() && !bad_array(count, requests) && outcount != nullptr) {
    return poll_until([&](int* done) {
      const int rc = test_some(count, requests, outcount, indices, statuses);
      *done = *outcount != 0;
      return rc;
    });
  }
  if (!persistent_requests_exist() || bad_array(count, requests) || outcount == nullptr) {
    return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  }
  for (;;) {
    const int rc = test_some(count, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    drive_mpi_progress();
  }
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  // MPICH's MPI_Request_get_status never calls a generalized request's poll function: the library's
  // operations would never be seen complete here. They advance as MPI_Test would advance them.
  advance_library();
  if (!persistent_requests_exist() || flag == nullptr) return PMPI_Request_get_status(request, flag, status);
  if (report_inactive(request, status)) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  bool running = false;
  const int rc = test_device_work(request, &running);
  if (rc != MPI_SUCCESS) return rc;
  if (running) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  const int base_rc = PMPI_Request_get_status(request, flag, status);
  if (base_rc == MPI_SUCCESS && *flag) report_status(request, status);
  return base_rc;
}

int test_all(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (bad_array(count, requests) || flag == nullptr) {
    return PMPI_Testall(count, requests, flag, statuses);  // the base MPI reports the bad argument
  }
  // The defect concerns persistent collective requests only, which the library registers: without
  // one in the array, the base MPI's own Testall (which also polls generalized requests) is right.
  if (!persistent_requests_exist() || std::none_of(requests, requests + count, is_registered)) {
    return PMPI_Testall(count, requests, flag, statuses);
  }
  MaskedArray masked(count, requests);
  if (masked.error() != MPI_SUCCESS) return masked.error();
  *flag = 0;
  if (masked.any_running()) return MPI_SUCCESS;
  advance_library();  // the base MPI's Request_get_status polls no generalized request
  for (int i = 0; i < count; ++i) {
    int done = 0;
    const int rc = PMPI_Request_get_status(masked.view()[i], &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || !done) return rc;
  }
  *flag = 1;
  const int rc = PMPI_Waitall(count, masked.view(), statuses);
  masked.all_completed(statuses);
  return rc;
}

}  // namespace mcrp
