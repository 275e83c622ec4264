#include "runtime/wait_family.h"

#include <algorithm>
#include <vector>

#include "runtime/kept_statuses.h"
#include "runtime/persistent.h"
#include "runtime/progress.h"
#include "runtime/raised_errors.h"
#include "runtime/requests.h"

namespace mcrp {
namespace {

bool bad_array(int count, const MPI_Request requests[]) { return count < 0 || (count > 0 && requests == nullptr); }

// Whether an array form's return code leaves its completed elements' statuses written.
bool array_completed(int rc) { return rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS; }

// The Test forms proper. The entry points (test_one, ...) first advance the library's background
// work: a Test call is how a polling program lets MPI progress, and a peer's rendezvous may wait for
// this rank's clear-to-send or group (p2p/engine.h) while the array holds only the base MPI's
// requests, whose test reaches no code of the library. The polling waits advance it themselves.
int test_one_now(MPI_Request* request, int* flag, MPI_Status* status);
int test_all_now(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int test_any_now(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int test_some_now(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);

// A completed element's status and the error MPI should report for it.
struct CompletedElement {
  MPI_Status* status;  // MPI_STATUS_IGNORE if none
  int error;
};

// The result of an array form (Waitall, Testall, Waitsome, Testsome) whose completed elements
// include failed persistent rounds, which the base MPI saw complete cleanly: MPI_ERR_IN_STATUS, with
// each completed element's error in its status (MPI_SUCCESS where the base MPI returned success and
// so set none). The base MPI's own failure of the call comes first.
int array_result(int rc, const std::vector<CompletedElement>& completed) {
  const bool failed =
      std::any_of(completed.begin(), completed.end(), [](const CompletedElement& e) { return e.error != MPI_SUCCESS; });
  if (!failed || !array_completed(rc)) return rc;
  for (const CompletedElement& element : completed) {
    if (element.status == MPI_STATUS_IGNORE) continue;
    if (element.error != MPI_SUCCESS || rc == MPI_SUCCESS) element.status->MPI_ERROR = element.error;
  }
  return MPI_ERR_IN_STATUS;
}

// The array as the base MPI's Wait/Test calls over arrays should see it: registered persistent
// handles that are inactive or whose operation still runs replaced by MPI_REQUEST_NULL (for which
// the base MPI reports the empty status an inactive request has). completed(i) then records what
// the base MPI completed and copies it back.
class MaskedArray {
 public:
  MaskedArray(int count, MPI_Request requests[])
      : requests_(requests), view_(requests, requests + count), masked_(count, 0), entries_(count) {
    for (int i = 0; i < count; ++i) {
      entries_[i] = find_persistent(requests[i]);  // now: see runtime/persistent.h
      bool hide = false, running = false;
      hide_from_base(entries_[i], &hide, &running);
      if (hide) {
        masked_[i] = 1;
        view_[i] = MPI_REQUEST_NULL;
      }
      any_running_ = any_running_ || running;
    }
  }
  // The base MPI completed element i of the view, and wrote its status to *status. Returns the
  // error of a persistent round behind it (runtime/persistent.h).
  int completed(int i, MPI_Status* status) {
    const int error = mark_completed(entries_[i], status);
    requests_[i] = view_[i];
    return error;
  }
  // The base MPI's Waitall over the whole view returned rc: the hidden elements stay as they were.
  int all_completed(int rc, MPI_Status statuses[]) {
    std::vector<CompletedElement> done;
    for (int i = 0; i < static_cast<int>(masked_.size()); ++i) {
      if (masked_[i]) continue;
      MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
      done.push_back({status, completed(i, status)});
    }
    return array_result(rc, done);
  }
  // The base MPI's Waitsome/Testsome completed *outcount elements and returned rc.
  int some_completed(int rc, const int* outcount, const int indices[], MPI_Status statuses[]) {
    if (!array_completed(rc) || *outcount == MPI_UNDEFINED) return rc;
    std::vector<CompletedElement> done;
    for (int k = 0; k < *outcount; ++k) {
      MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
      done.push_back({status, completed(indices[k], status)});
    }
    return array_result(rc, done);
  }
  MPI_Request* view() { return view_.data(); }
  // "No active request" is not true while a hidden collective still runs.
  bool any_running() const { return any_running_; }

 private:
  MPI_Request* requests_;
  std::vector<MPI_Request> view_;
  std::vector<char> masked_;
  std::vector<PersistentRef> entries_;  // found before the base call
  bool any_running_ = false;
};

// The handles of one base call's array, kept while a library request in it may fail
// (runtime/requests.h: MPICH 4.0.2 then reports MPI_ERR_OTHER in the failed element's status), so
// that the failed elements get their own error back after the base MPI has nulled the handles.
// Copies nothing when no library request exists. One at a time per thread: only call_over_all and
// call_over_some below make one, around one base call.
class LibraryFailures {
 public:
  LibraryFailures(int count, const MPI_Request requests[]) {
    if (count <= 0 || requests == nullptr || !library_failure_possible()) return;
    static thread_local std::vector<MPI_Request> handles;
    handles.assign(requests, requests + count);
    handles_ = &handles;
    forget_completed_failures();
  }
  // After Waitall or Testall returned rc.
  void restore_all(int rc, int count, MPI_Status statuses[]) const {
    if (!wanted(rc, statuses)) return;
    for (int i = 0; i < count; ++i) restore(i, &statuses[i]);
  }
  // After Waitsome or Testsome returned rc.
  void restore_some(int rc, const int* outcount, const int indices[], MPI_Status statuses[]) const {
    if (!wanted(rc, statuses) || *outcount == MPI_UNDEFINED) return;
    for (int k = 0; k < *outcount; ++k) restore(indices[k], &statuses[k]);
  }

 private:
  bool wanted(int rc, MPI_Status statuses[]) const {
    return handles_ != nullptr && rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE;
  }
  void restore(int i, MPI_Status* status) const {
    if (status->MPI_ERROR == MPI_SUCCESS || status->MPI_ERROR == MPI_ERR_PENDING) return;
    const int error = completed_failure((*handles_)[i]);
    if (error != MPI_SUCCESS) status->MPI_ERROR = error;
  }
  std::vector<MPI_Request>* handles_ = nullptr;
};

// `base_call`, the base MPI's Waitall or Testall over `requests`, with each failed library request
// it completes given its own error back.
template <class BaseCall>
int call_over_all(int count, const MPI_Request requests[], MPI_Status statuses[], BaseCall base_call) {
  const LibraryFailures failures(count, requests);
  const int rc = base_call();
  failures.restore_all(rc, count, statuses);
  return rc;
}

// The same for the base MPI's Waitsome or Testsome.
template <class BaseCall>
int call_over_some(int count, const MPI_Request requests[], const int* outcount, const int indices[],
                   MPI_Status statuses[], BaseCall base_call) {
  const LibraryFailures failures(count, requests);
  const int rc = base_call();
  failures.restore_some(rc, outcount, indices, statuses);
  return rc;
}

void wait_every_device_work(int count, const MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) wait_device_work(requests[i]);
}

// While the library has background work that a peer may be waiting for (a point-to-point
// clear-to-send), a wait must not block inside the base MPI: it polls its test form and advances
// the library in between.
template <class Test>
int poll_until(Test&& test) {
  WaitNote note("a wait of the MPI_Wait family, polling", nullptr);
  for (;;) {
    int done = 0;
    const int rc = test(&done);
    if (rc != MPI_SUCCESS || done) return rc;
    advance_library();
    drive_mpi_progress();
    note.polled();
  }
}

}  // namespace

int wait_polling(MPI_Request* request, MPI_Status* status) {
  return poll_until([&](int* done) { return test_one_now(request, done, status); });
}

namespace {

int wait_one_unkept(MPI_Request* request, MPI_Status* status) {
  if (background_work_pending() && request != nullptr) return wait_polling(request, status);
  if (!persistent_requests_exist() || request == nullptr) return PMPI_Wait(request, status);
  const PersistentRef entry = find_persistent(*request);  // before the wait frees the handle
  if (report_inactive(entry, status)) return MPI_SUCCESS;
  wait_device_work(entry);
  const int rc = PMPI_Wait(request, status);
  return rc == MPI_SUCCESS ? mark_completed(entry, status) : rc;
}

int wait_all_unkept(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (background_work_pending() && !bad_array(count, requests)) {
    return poll_until([&](int* done) { return test_all_now(count, requests, done, statuses); });
  }
  if (bad_array(count, requests)) return PMPI_Waitall(count, requests, statuses);
  if (!persistent_requests_exist()) {
    return call_over_all(count, requests, statuses, [&] { return PMPI_Waitall(count, requests, statuses); });
  }
  // Waiting for the device work first is safe: the base MPI keeps progressing meanwhile, and no
  // other request's completion is needed for it to finish.
  wait_every_device_work(count, requests);
  MaskedArray masked(count, requests);  // nothing runs any more: hides the inactive handles
  const int rc =
      call_over_all(count, masked.view(), statuses, [&] { return PMPI_Waitall(count, masked.view(), statuses); });
  return masked.all_completed(rc, statuses);
}

// What a test of one request can answer without the base MPI: an inactive persistent request is
// complete with an empty status, and one whose device work still runs is not. True when `flag`
// holds that answer.
bool answered_before_base(const PersistentRef& entry, int* flag, MPI_Status* status) {
  if (report_inactive(entry, status)) {
    *flag = 1;
    return true;
  }
  bool running = false;
  test_device_work(entry, &running);
  if (running) *flag = 0;
  return running;
}

int test_one_now(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!persistent_requests_exist() || request == nullptr || flag == nullptr) return PMPI_Test(request, flag, status);
  const PersistentRef entry = find_persistent(*request);  // before the test frees the handle
  if (answered_before_base(entry, flag, status)) return MPI_SUCCESS;
  const int rc = PMPI_Test(request, flag, status);
  return rc == MPI_SUCCESS && *flag ? mark_completed(entry, status) : rc;
}

int test_any_now(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!persistent_requests_exist() || bad_array(count, requests) || index == nullptr || flag == nullptr) {
    return PMPI_Testany(count, requests, index, flag, status);
  }
  MaskedArray masked(count, requests);
  const int rc = PMPI_Testany(count, masked.view(), index, flag, status);
  if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) return masked.completed(*index, status);
  if (*flag && *index == MPI_UNDEFINED && masked.any_running()) *flag = 0;
  return rc;
}

int test_some_now(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (bad_array(count, requests) || outcount == nullptr || indices == nullptr) {
    return PMPI_Testsome(count, requests, outcount, indices, statuses);
  }
  if (!persistent_requests_exist()) {
    return call_over_some(count, requests, outcount, indices, statuses,
                          [&] { return PMPI_Testsome(count, requests, outcount, indices, statuses); });
  }
  MaskedArray masked(count, requests);
  int rc = call_over_some(count, masked.view(), outcount, indices, statuses,
                          [&] { return PMPI_Testsome(count, masked.view(), outcount, indices, statuses); });
  rc = masked.some_completed(rc, outcount, indices, statuses);
  if (*outcount == MPI_UNDEFINED && masked.any_running()) *outcount = 0;
  return rc;
}

int wait_any_unkept(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (background_work_pending() && !bad_array(count, requests) && index != nullptr) {
    return poll_until([&](int* done) { return test_any_now(count, requests, index, done, status); });
  }
  if (!persistent_requests_exist() || bad_array(count, requests) || index == nullptr) {
    return PMPI_Waitany(count, requests, index, status);
  }
  for (;;) {
    int flag = 0;
    const int rc = test_any_now(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    drive_mpi_progress();
  }
}

int wait_some_unkept(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (background_work_pending() && !bad_array(count, requests) && outcount != nullptr) {
    return poll_until([&](int* done) {
      const int rc = test_some_now(count, requests, outcount, indices, statuses);
      *done = *outcount != 0;
      return rc;
    });
  }
  if (bad_array(count, requests) || outcount == nullptr || indices == nullptr) {
    return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  }
  if (!persistent_requests_exist()) {
    return call_over_some(count, requests, outcount, indices, statuses,
                          [&] { return PMPI_Waitsome(count, requests, outcount, indices, statuses); });
  }
  for (;;) {
    const int rc = test_some_now(count, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0) return rc;
    drive_mpi_progress();
  }
}

}  // namespace

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  // MPICH's MPI_Request_get_status never calls a generalized request's poll function: the library's
  // operations would never be seen complete here. They advance as MPI_Test would advance them.
  advance_library();
  if (!persistent_requests_exist() || flag == nullptr) return get_status_kept(request, flag, status);
  const PersistentRef entry = find_persistent(request);
  if (answered_before_base(entry, flag, status)) return MPI_SUCCESS;
  const int base_rc = get_status_kept(request, flag, status);
  return base_rc == MPI_SUCCESS && *flag ? report_status(entry, status) : base_rc;
}

namespace {

int test_all_now(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (bad_array(count, requests) || flag == nullptr) {
    return PMPI_Testall(count, requests, flag, statuses);  // the base MPI reports the bad argument
  }
  // The defect concerns persistent collective requests only, which the library registers: without
  // one in the array, the base MPI's own Testall (which also polls generalized requests) is right.
  if (!persistent_requests_exist() || std::none_of(requests, requests + count, is_registered)) {
    return call_over_all(count, requests, statuses, [&] { return PMPI_Testall(count, requests, flag, statuses); });
  }
  MaskedArray masked(count, requests);
  *flag = 0;
  if (masked.any_running()) return MPI_SUCCESS;
  advance_library();  // the base MPI's Request_get_status polls no generalized request
  for (int i = 0; i < count; ++i) {
    int done = 0;
    // A request whose status cannot be had has failed, and is complete: Waitall reports it. Kept:
    // some base MPIs lose the status of a persistent request seen complete (runtime/kept_statuses.h).
    const int rc = get_status_kept(masked.view()[i], &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done) return MPI_SUCCESS;
  }
  *flag = 1;
  KeptStatuses kept(count, masked.view());
  const int rc =
      call_over_all(count, masked.view(), statuses, [&] { return PMPI_Waitall(count, masked.view(), statuses); });
  if (array_completed(rc)) kept.all_completed(statuses);
  return masked.all_completed(rc, statuses);
}

}  // namespace

// The entry points: the forms above, with the statuses kept for requests that
// MPI_Request_get_status saw complete given back where the base MPI lost them
// (runtime/kept_statuses.h); one atomic load while none is kept. Where they read what a completion
// wrote (an index, a flag), its result is base_result's: a base MPI that returned MPI_SUCCESS after
// the program's error handler ran wrote nothing (runtime/raised_errors.h).

namespace {

// Waitsome or Testsome (`some`, the form above) with the kept statuses.
template <class Some>
int some_kept(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], Some some) {
  if (!statuses_kept()) return some(count, requests, outcount, indices, statuses);
  KeptStatuses kept(count, requests);
  if (kept.any() && outcount != nullptr && indices != nullptr) {
    return kept.complete_each(requests, outcount, indices, statuses, wait_one_unkept);
  }
  const int rc = base_result([&] { return some(count, requests, outcount, indices, statuses); });
  if (array_completed(rc)) kept.some_completed(outcount, indices, statuses);
  return rc;
}

}  // namespace

int wait_one(MPI_Request* request, MPI_Status* status) {
  if (!statuses_kept() || request == nullptr) return wait_one_unkept(request, status);
  KeptStatuses kept(1, request);
  const int rc = base_result([&] { return wait_one_unkept(request, status); });
  if (rc == MPI_SUCCESS) kept.completed(0, status);
  return rc;
}

int wait_all(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!statuses_kept()) return wait_all_unkept(count, requests, statuses);
  KeptStatuses kept(count, requests);
  const int rc = base_result([&] { return wait_all_unkept(count, requests, statuses); });
  if (array_completed(rc)) kept.all_completed(statuses);
  return rc;
}

int wait_any(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!statuses_kept()) return wait_any_unkept(count, requests, index, status);
  KeptStatuses kept(count, requests);
  if (kept.any() && index != nullptr) return kept.complete_first(requests, index, status, wait_one_unkept);
  const int rc = base_result([&] { return wait_any_unkept(count, requests, index, status); });
  if (rc == MPI_SUCCESS) kept.completed(*index, status);
  return rc;
}

int wait_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return some_kept(count, requests, outcount, indices, statuses, wait_some_unkept);
}

int test_one(MPI_Request* request, int* flag, MPI_Status* status) {
  advance_background_work();
  if (!statuses_kept() || request == nullptr) return test_one_now(request, flag, status);
  KeptStatuses kept(1, request);
  const int rc = base_result([&] { return test_one_now(request, flag, status); });
  if (rc == MPI_SUCCESS && *flag) kept.completed(0, status);
  return rc;
}

int test_all(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  advance_background_work();
  if (!statuses_kept()) return test_all_now(count, requests, flag, statuses);
  KeptStatuses kept(count, requests);
  const int rc = base_result([&] { return test_all_now(count, requests, flag, statuses); });
  if (array_completed(rc) && *flag) kept.all_completed(statuses);
  return rc;
}

int test_any(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  advance_background_work();
  if (!statuses_kept()) return test_any_now(count, requests, index, flag, status);
  KeptStatuses kept(count, requests);
  if (kept.any() && index != nullptr && flag != nullptr) {
    *flag = 1;
    return kept.complete_first(requests, index, status, wait_one_unkept);
  }
  const int rc = base_result([&] { return test_any_now(count, requests, index, flag, status); });
  if (rc == MPI_SUCCESS && *flag) kept.completed(*index, status);
  return rc;
}

int test_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  advance_background_work();
  return some_kept(count, requests, outcount, indices, statuses, test_some_now);
}

}  // namespace mcrp
