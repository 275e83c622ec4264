// The machinery behind device-buffer nonblocking collectives, exercised without a GPU: operations
// wrapped by mcrp::start_generalized (MPIX_Grequest_start with a poll function) must complete through
// every Wait/Test call, in one array with the base MPI's own requests; an op may drive an inner
// base-MPI request from inside the poll function (the staged path does exactly that); a failing op
// reports its error through the request; and buffers are released before completion is visible.
#include <mpi.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/requests.h"
#include "runtime/wait_family.h"
#include "tests/mpi/check.h"

namespace {

mcrp_test::Checker g_check;
std::atomic<int> g_live_ops{0};  // ops not yet destroyed

// Completes after `polls` calls of progress(); counts itself so tests can see it was released.
class CountdownOp : public mcrp::AsyncOp {
 public:
  explicit CountdownOp(int polls) : left_(polls) { ++g_live_ops; }
  ~CountdownOp() override { --g_live_ops; }
  mcrp::Status progress(bool* done) override {
    *done = --left_ <= 0;
    return {};
  }

 private:
  int left_;
};

// Owns an inner base-MPI allreduce and tests it from progress(), as the staged path's op does.
class InnerAllreduceOp : public mcrp::AsyncOp {
 public:
  InnerAllreduceOp(MPI_Comm comm, int value) : in_(value), out_(-1) {
    ++g_live_ops;
    PMPI_Iallreduce(&in_, &out_, 1, MPI_INT, MPI_SUM, comm, &inner_);
  }
  ~InnerAllreduceOp() override { --g_live_ops; }
  mcrp::Status progress(bool* done) override {
    int flag = 0;
    if (PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return mcrp::Status(MPI_ERR_OTHER, "inner test failed");
    if (flag) {
      *result_ = out_;
      *done = true;
    }
    return {};
  }
  int* result_ = nullptr;

 private:
  int in_, out_;
  MPI_Request inner_ = MPI_REQUEST_NULL;
};

// A receive-like op: reports a source, tag and count, and withdraws when cancelled before it is done.
class StatusOp : public mcrp::AsyncOp {
 public:
  explicit StatusOp(int polls) : left_(polls) { ++g_live_ops; }
  ~StatusOp() override { --g_live_ops; }
  mcrp::Status progress(bool* done) override {
    *done = cancelled_ || --left_ <= 0;
    return {};
  }
  void fill_status(MPI_Status* status) const override {
    PMPI_Status_set_elements_x(status, MPI_INT, cancelled_ ? 0 : 3);
    PMPI_Status_set_cancelled(status, cancelled_ ? 1 : 0);
    status->MPI_SOURCE = 7;
    status->MPI_TAG = 42;
  }
  void cancel() override { cancelled_ = true; }

 private:
  int left_;
  bool cancelled_ = false;
};

class FailingOp : public mcrp::AsyncOp {
 public:
  explicit FailingOp(int error_class = MPI_ERR_OTHER) : error_class_(error_class) {}
  mcrp::Status progress(bool*) override { return mcrp::Status(error_class_, "injected failure"); }

 private:
  int error_class_;
};

MPI_Request start(std::unique_ptr<mcrp::AsyncOp> op, MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  const mcrp::Status status = mcrp::start_generalized(std::move(op), comm, "MPI_Iallreduce", {}, &request);
  g_check.check(status.ok() && request != MPI_REQUEST_NULL, "start_generalized returns a request");
  return request;
}

void wait_and_test_single(MPI_Comm comm) {
  MPI_Request r = start(std::make_unique<CountdownOp>(5), comm);
  g_check.check(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "MPI_Wait completes an op");
  r = start(std::make_unique<CountdownOp>(3), comm);
  int flag = 0, tests = 0;
  while (!flag && tests < 100000) {
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    ++tests;
  }
  g_check.check(flag && r == MPI_REQUEST_NULL, "MPI_Test loop completes an op");
  g_check.check(g_live_ops.load() == 0, "ops are released before completion is visible");
}

// Library requests mixed with point-to-point requests and MPI_REQUEST_NULL.
void mixed_arrays(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int sent = 100 + rank, received = -1, sum = -1;
  std::vector<MPI_Request> requests(5, MPI_REQUEST_NULL);
  requests[0] = start(std::make_unique<CountdownOp>(4), comm);
  MPI_Irecv(&received, 1, MPI_INT, left, 7, comm, &requests[1]);
  // requests[2] stays MPI_REQUEST_NULL
  auto inner = std::make_unique<InnerAllreduceOp>(comm, rank + 1);
  inner->result_ = &sum;
  requests[3] = start(std::move(inner), comm);
  MPI_Isend(&sent, 1, MPI_INT, right, 7, comm, &requests[4]);
  std::vector<MPI_Status> statuses(requests.size());
  g_check.check(MPI_Waitall(5, requests.data(), statuses.data()) == MPI_SUCCESS, "Waitall over a mixed array");
  g_check.check(received == 100 + left && statuses[1].MPI_SOURCE == left && statuses[1].MPI_TAG == 7,
                "p2p status in a mixed Waitall");
  g_check.check(sum == size * (size + 1) / 2, "inner base request driven from the poll function");

  // Waitany / Testsome / Testany over another mixed set.
  requests.assign(3, MPI_REQUEST_NULL);
  requests[0] = start(std::make_unique<CountdownOp>(2), comm);
  requests[2] = start(std::make_unique<CountdownOp>(6), comm);
  int index = -1, completed = 0;
  for (int i = 0; i < 2; ++i) {
    MPI_Waitany(3, requests.data(), &index, MPI_STATUS_IGNORE);
    completed += index == 0 || index == 2;
  }
  MPI_Waitany(3, requests.data(), &index, MPI_STATUS_IGNORE);
  g_check.check(completed == 2 && index == MPI_UNDEFINED, "Waitany completes each library request once");

  requests.assign(2, MPI_REQUEST_NULL);
  requests[0] = start(std::make_unique<CountdownOp>(3), comm);
  requests[1] = start(std::make_unique<CountdownOp>(3), comm);
  int outcount = 0, total = 0, indices[2];
  for (int spins = 0; total < 2 && spins < 100000; ++spins) {
    MPI_Testsome(2, requests.data(), &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED) total += outcount;
  }
  g_check.check(total == 2, "Testsome completes library requests");
  int flag = 0;
  MPI_Testany(2, requests.data(), &index, &flag, MPI_STATUS_IGNORE);
  g_check.check(flag && index == MPI_UNDEFINED, "Testany on completed requests reports none active");
}

// The op's error goes through its communicator's handler when it happens; MPI_Wait then raises the
// request's error on MPI_COMM_WORLD (a generalized request has no communicator), so both return here.
void failures_reach_the_request(MPI_Comm comm) {
  MPI_Comm quiet;
  MPI_Comm_dup(comm, &quiet);
  MPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request r = MPI_REQUEST_NULL;
  mcrp::start_generalized(std::make_unique<FailingOp>(), quiet, "MPI_Iallreduce", {}, &r);
  // MPI_Wait reports the error in its return code (it does not set status.MPI_ERROR).
  const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  g_check.check(rc != MPI_SUCCESS, "a failing op makes Wait report an error");
  g_check.check(error_class == MPI_ERR_OTHER, "the error keeps its class (got " + std::to_string(error_class) + ")");
  g_check.check(r == MPI_REQUEST_NULL, "a failed request is still released");
  // Each single-completion form of the library returns the op's own error class.
  const char* forms[] = {"Wait", "Test", "Waitany", "Testany", "Request_get_status"};
  for (int form = 0; form < 5; ++form) {
    mcrp::start_generalized(std::make_unique<FailingOp>(MPI_ERR_ARG), quiet, "MPI_Iallreduce", {}, &r);
    int flag = 0, index = MPI_UNDEFINED, code = MPI_SUCCESS;
    for (int spins = 0; !flag && spins < 100000; ++spins) {
      switch (form) {
        case 0: code = mcrp::wait_one(&r, MPI_STATUS_IGNORE); flag = 1; break;
        case 1: code = mcrp::test_one(&r, &flag, MPI_STATUS_IGNORE); break;
        case 2: code = mcrp::wait_any(1, &r, &index, MPI_STATUS_IGNORE); flag = 1; break;
        case 3: code = mcrp::test_any(1, &r, &index, &flag, MPI_STATUS_IGNORE); break;
        default: code = mcrp::request_get_status(r, &flag, MPI_STATUS_IGNORE); break;
      }
      flag = flag || code != MPI_SUCCESS;
    }
    int code_class = MPI_SUCCESS;
    MPI_Error_class(code, &code_class);
    g_check.check(code_class == MPI_ERR_ARG, std::string(forms[form]) + " of a failed op returns its class MPI_ERR_ARG (got " +
                                                 std::to_string(code_class) + ")");
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_free(&quiet);
}

// A failed op beside one that succeeds, completed by the library's array forms (runtime/
// wait_family.h, what MPI_Waitall and the others call): MPI_ERR_IN_STATUS, and the failed element's
// status carries the op's own error class (MPICH 4.0.2 alone puts MPI_ERR_OTHER there).
void failures_in_arrays(MPI_Comm comm) {
  MPI_Comm quiet;
  MPI_Comm_dup(comm, &quiet);
  MPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // where the base MPI raises a request's error
  const char* forms[] = {"Waitall", "Testall", "Waitsome", "Testsome"};
  for (int form = 0; form < 4; ++form) {
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    mcrp::start_generalized(std::make_unique<FailingOp>(MPI_ERR_ARG), quiet, "MPI_Iallreduce", {}, &requests[0]);
    mcrp::start_generalized(std::make_unique<CountdownOp>(3), quiet, "MPI_Iallreduce", {}, &requests[1]);
    int failed_class = -1, other_error = -1, call_rc = MPI_SUCCESS;
    for (int spins = 0; (failed_class == -1 || other_error == -1) && spins < 100000; ++spins) {
      MPI_Status statuses[2];
      int indices[2] = {0, 1}, outcount = 2, flag = 1, rc = MPI_SUCCESS;
      switch (form) {
        case 0: rc = mcrp::wait_all(2, requests, statuses); break;
        case 1: rc = mcrp::test_all(2, requests, &flag, statuses); break;
        case 2: rc = mcrp::wait_some(2, requests, &outcount, indices, statuses); break;
        default: rc = mcrp::test_some(2, requests, &outcount, indices, statuses); break;
      }
      if (!flag || outcount == MPI_UNDEFINED) continue;
      if (rc != MPI_SUCCESS) call_rc = rc;
      for (int k = 0; k < outcount; ++k) {
        const int error = rc == MPI_ERR_IN_STATUS ? statuses[k].MPI_ERROR : rc;
        if (error == MPI_ERR_PENDING) continue;  // still active: a later call completes it
        if (indices[k] == 0 && failed_class == -1) MPI_Error_class(error, &failed_class);
        if (indices[k] == 1 && other_error == -1) other_error = error;
      }
    }
    const std::string what = std::string(forms[form]) + " over a failed and a successful op";
    g_check.check(call_rc == MPI_ERR_IN_STATUS, what + ": returns MPI_ERR_IN_STATUS (got " + std::to_string(call_rc) + ")");
    g_check.check(failed_class == MPI_ERR_ARG,
                  what + ": the failed op's status has its class MPI_ERR_ARG (got " + std::to_string(failed_class) + ")");
    g_check.check(other_error == MPI_SUCCESS, what + ": the other op's status says MPI_SUCCESS");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_free(&quiet);
}

// What point-to-point needs of these requests: the op's status (source, tag, count) reaches the
// caller; MPI_Cancel reaches the op; MPI_Request_free on an active request leaves the op to the
// library, which finishes and releases it from its own progress.
void statuses_cancel_and_free(MPI_Comm comm) {
  MPI_Request r = start(std::make_unique<StatusOp>(3), comm);
  MPI_Status status;
  g_check.check(MPI_Wait(&r, &status) == MPI_SUCCESS, "Wait on a receive-like op");
  int count = -1, cancelled = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  MPI_Test_cancelled(&status, &cancelled);
  g_check.check(status.MPI_SOURCE == 7 && status.MPI_TAG == 42 && count == 3 && cancelled == 0,
                "the op's source, tag and count reach MPI_Wait's status");

  r = start(std::make_unique<StatusOp>(1000000), comm);
  g_check.check(MPI_Cancel(&r) == MPI_SUCCESS, "MPI_Cancel on an op");
  g_check.check(MPI_Wait(&r, &status) == MPI_SUCCESS, "Wait after cancel");
  MPI_Test_cancelled(&status, &cancelled);
  g_check.check(cancelled == 1, "a withdrawn op reports cancelled");

  const int before = g_live_ops.load();
  r = start(std::make_unique<CountdownOp>(50), comm);
  g_check.check(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "Request_free on an active op");
  // Any later library wait finishes it (here: Waits on other ops of the library).
  for (int i = 0; i < 100 && g_live_ops.load() > before; ++i) {
    MPI_Request other = start(std::make_unique<CountdownOp>(1), comm);
    MPI_Wait(&other, MPI_STATUS_IGNORE);
  }
  g_check.check(g_live_ops.load() == before, "the freed op was finished and released by the library");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  wait_and_test_single(MPI_COMM_WORLD);
  mixed_arrays(MPI_COMM_WORLD);
  failures_reach_the_request(MPI_COMM_WORLD);
  failures_in_arrays(MPI_COMM_WORLD);
  statuses_cancel_and_free(MPI_COMM_WORLD);
  g_check.check(g_live_ops.load() == 0, "no op outlives its request");
  const int rc = g_check.finish(MPI_COMM_WORLD, "test_generalized_requests");
  MPI_Finalize();
  return rc;
}
