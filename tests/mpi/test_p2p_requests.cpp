// Request semantics of point-to-point on device buffers, beyond moving the data (test_p2p does that):
// what MPI says about persistent requests that are inactive, cancelled or freed while active, about
// nonblocking requests freed while active, and about MPI_Request_get_status / MPI_Testall seeing a
// request complete. Each section is a ring (a rank receives from its left, sends to its right):
//   --space S      buffers in S (host, fake-device)
//   --section NAME only that section (inactive, completion, cancel, proc-null-probes, get-status,
//                  testall-beside, free-persistent, free-nonblocking)
// Statuses of inactive requests must be empty (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not
// cancelled). A freed operation's data is checked after MPI_Finalize, the only point where MPI says
// it has arrived. A section the library gets wrong may deadlock: the test's timeout catches that.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/alloc_kinds_info.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_messages.h"

namespace {

using namespace mcrp_test;


struct Env {
  Checker& checker;
  MemorySpace& space;
  int rank;
  int size;
  int right() const { return (rank + 1) % size; }
  int left() const { return (rank + size - 1) % size; }
};

std::unique_ptr<SpaceBuffer<int>> send_buffer(const Env& e, int tag, MPI_Count n) {
  return std::make_unique<SpaceBuffer<int>>(e.space, message(e.rank, tag, n));
}
std::unique_ptr<SpaceBuffer<int>> recv_buffer(const Env& e, MPI_Count n) {
  return std::make_unique<SpaceBuffer<int>>(e.space, std::vector<int>(static_cast<std::size_t>(n) + 1, kSentinel));
}

// The buffer holds message(src, tag, n) followed by the untouched sentinel.
bool holds_message(const SpaceBuffer<int>& buffer, int src, int tag, MPI_Count n) {
  std::vector<int> expected = message(src, tag, n);
  expected.push_back(kSentinel);
  return buffer.download() == expected;
}

// ---- a nonblocking receive and send freed while active ----
// A receive whose data can only be checked after MPI_Finalize (its request was freed while active).
struct Delivery {
  std::unique_ptr<SpaceBuffer<int>> buffer;
  std::unique_ptr<SpaceBuffer<int>> sent;  // the freed send's buffer, alive until its transfer ends
  int src, tag;
  MPI_Count n;
  std::string what;
};

void free_active_nonblocking(const Env& e, MPI_Count n, int tag, std::vector<Delivery>* after_finalize) {
  Delivery d{recv_buffer(e, n), send_buffer(e, tag, n), e.left(), tag, n,
             "a freed active Irecv of " + std::to_string(n) + " ints is delivered by MPI_Finalize"};
  MPI_Request request;
  MPI_Irecv(d.buffer->data(), static_cast<int>(n), MPI_INT, e.left(), tag, MPI_COMM_WORLD, &request);
  MPI_Request_free(&request);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(d.sent->data(), static_cast<int>(n), MPI_INT, e.right(), tag, MPI_COMM_WORLD, &request);
  MPI_Request_free(&request);
  MPI_Barrier(MPI_COMM_WORLD);  // host calls only from here on
  after_finalize->push_back(std::move(d));
}

int check_deliveries(const std::vector<Delivery>& deliveries, int rank) {
  int failed = 0;
  for (const Delivery& d : deliveries) {
    if (holds_message(*d.buffer, d.src, d.tag, d.n)) continue;
    std::fprintf(stderr, "[rank %d] FAILED after MPI_Finalize: %s\n", rank, d.what.c_str());
    ++failed;
  }
  if (rank == 0) std::printf("after MPI_Finalize: %zu deliveries checked on each rank\n", deliveries.size());
  return failed == 0 ? 0 : 1;
}

// ---- a persistent receive freed while active: the free is local, the data still arrives ----
void free_active_persistent(const Env& e, MPI_Count n, int tag, std::vector<Delivery>* after_finalize) {
  Delivery d{recv_buffer(e, n), send_buffer(e, tag, n), e.left(), tag, n,
             "a freed active persistent receive of " + std::to_string(n) + " ints is delivered by MPI_Finalize"};
  MPI_Request request;
  MPI_Recv_init(d.buffer->data(), static_cast<int>(n), MPI_INT, e.left(), tag, MPI_COMM_WORLD, &request);
  MPI_Start(&request);
  // The matching message is sent only after the free: a free that waits for it never returns.
  const int rc = MPI_Request_free(&request);
  e.checker.check(rc == MPI_SUCCESS && request == MPI_REQUEST_NULL, "MPI_Request_free of an active persistent receive");
  MPI_Send(d.sent->data(), static_cast<int>(n), MPI_INT, e.right(), tag, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  after_finalize->push_back(std::move(d));
}

// ---- MPI_Request_get_status and MPI_Testall see device requests complete ----
constexpr double kPatience = 10.0;  // seconds a Test-style loop waits for a completion that is due

// Calls `test(&flag)` until flag is set or kPatience seconds pass; returns the last flag.
template <class Test>
int test_until_done(Test&& test) {
  const double give_up = MPI_Wtime() + kPatience;
  int flag = 0;
  while (!flag && MPI_Wtime() < give_up) {
    if (test(&flag) != MPI_SUCCESS) return 0;
  }
  return flag;
}

void completion_is_seen(const Env& e) {
  const MPI_Count n = 1000;
  auto in = recv_buffer(e, n);
  auto out = send_buffer(e, 60, n);
  MPI_Request receive, send;
  MPI_Irecv(in->data(), static_cast<int>(n), MPI_INT, e.left(), 60, MPI_COMM_WORLD, &receive);
  MPI_Isend(out->data(), static_cast<int>(n), MPI_INT, e.right(), 60, MPI_COMM_WORLD, &send);
  const int seen = test_until_done([&](int* flag) { return MPI_Request_get_status(receive, flag, MPI_STATUS_IGNORE); });
  e.checker.check(seen == 1, "MPI_Request_get_status sees a nonblocking receive complete");
  MPI_Wait(&receive, MPI_STATUS_IGNORE);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  e.checker.check(holds_message(*in, e.left(), 60, n), "the receive seen by MPI_Request_get_status has its data");

  // A started persistent receive and a nonblocking one in one MPI_Testall.
  auto in2 = recv_buffer(e, n);
  auto out2 = send_buffer(e, 62, n);
  MPI_Request requests[2], sends[2];
  MPI_Recv_init(in->data(), static_cast<int>(n), MPI_INT, e.left(), 61, MPI_COMM_WORLD, &requests[0]);
  MPI_Start(&requests[0]);
  MPI_Irecv(in2->data(), static_cast<int>(n), MPI_INT, e.left(), 62, MPI_COMM_WORLD, &requests[1]);
  auto out1 = send_buffer(e, 61, n);
  MPI_Isend(out1->data(), static_cast<int>(n), MPI_INT, e.right(), 61, MPI_COMM_WORLD, &sends[0]);
  MPI_Isend(out2->data(), static_cast<int>(n), MPI_INT, e.right(), 62, MPI_COMM_WORLD, &sends[1]);
  MPI_Request pending[2] = {requests[0], requests[1]};
  const int all = test_until_done([&](int* flag) { return MPI_Testall(2, pending, flag, MPI_STATUSES_IGNORE); });
  e.checker.check(all == 1, "MPI_Testall completes a persistent and a nonblocking receive");
  if (all != 1) MPI_Waitall(2, pending, MPI_STATUSES_IGNORE);
  MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
  e.checker.check(holds_message(*in, e.left(), 61, n) && holds_message(*in2, e.left(), 62, n),
                  "the receives completed by MPI_Testall have their data");
  MPI_Request_free(&requests[0]);
}

// ---- inactive persistent requests, never started and after a completed round ----
// A status no operation wrote, so that a call that leaves it alone is caught.
MPI_Status scribbled_status() {
  MPI_Status status;
  status.MPI_SOURCE = 12345;
  status.MPI_TAG = 54321;
  MPI_Status_set_elements(&status, MPI_BYTE, 77);
  return status;
}

bool is_empty(const MPI_Status& status) {
  int count = -1, cancelled = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  MPI_Test_cancelled(&status, &cancelled);
  return status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG && count == 0 && cancelled == 0;
}

std::string describe(const MPI_Status& status) {
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return "source " + std::to_string(status.MPI_SOURCE) + " tag " + std::to_string(status.MPI_TAG) + " bytes " +
         std::to_string(count);
}

// ---- statuses of persistent receives seen complete ----
// MPICH 4.2-5.0 and Intel MPI 2021.18 lose a persistent receive's status once
// MPI_Request_get_status has seen it complete, and their Waitany then never returns it
// (runtime/kept_statuses.h). The receives here are on host memory, which the library hands to the
// base MPI as they are; the sends are in the space under test.
enum class Completion { wait, test, waitall, testall, waitany, testany, waitsome, testsome };
constexpr const char* kCompletionNames[] = {"MPI_Wait",    "MPI_Test",    "MPI_Waitall",  "MPI_Testall",
                                            "MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"};

// Completes requests[0] by `how`; the any and some forms see a second request beside it, which the
// left rank's message may complete first (the any forms are then called again). Its status lands in
// *status. False when the form did not return element 0.
bool complete_first(Completion how, MPI_Request requests[2], MPI_Status* status) {
  int index = -1, outcount = 0, indices[2] = {-1, -1};
  MPI_Status statuses[2];
  auto returned_first = [&] {
    for (int k = 0; k < outcount; ++k) {
      if (indices[k] != 0) continue;
      *status = statuses[k];
      return true;
    }
    return false;
  };
  switch (how) {
    case Completion::wait:
      return MPI_Wait(&requests[0], status) == MPI_SUCCESS;
    case Completion::test:
      return test_until_done([&](int* f) { return MPI_Test(&requests[0], f, status); }) == 1;
    case Completion::waitall:
      return MPI_Waitall(1, requests, status) == MPI_SUCCESS;
    case Completion::testall:
      return test_until_done([&](int* f) { return MPI_Testall(1, requests, f, status); }) == 1;
    case Completion::waitany:
      for (int call = 0; call < 2 && index != 0; ++call) {
        if (MPI_Waitany(2, requests, &index, status) != MPI_SUCCESS) return false;
      }
      return index == 0;
    case Completion::testany:
      for (int call = 0; call < 2 && index != 0; ++call) {
        if (test_until_done([&](int* f) { return MPI_Testany(2, requests, &index, f, status); }) != 1) return false;
      }
      return index == 0;
    case Completion::waitsome:
      for (int call = 0; call < 2; ++call) {
        if (MPI_Waitsome(2, requests, &outcount, indices, statuses) != MPI_SUCCESS) return false;
        if (returned_first()) return true;
      }
      return false;
    case Completion::testsome:
      for (int call = 0; call < 2; ++call) {
        const int flag = test_until_done([&](int* f) {
          const int rc = MPI_Testsome(2, requests, &outcount, indices, statuses);
          *f = outcount > 0 && outcount != MPI_UNDEFINED;
          return rc;
        });
        if (flag != 1) return false;
        if (returned_first()) return true;
      }
      return false;
  }
  return false;
}

bool status_names(const MPI_Status& status, int source, int tag, MPI_Count n) {
  int count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  return status.MPI_SOURCE == source && status.MPI_TAG == tag && count == n;
}

// The program asks MPI_Request_get_status (twice), then completes the receive by each form, two
// rounds each (MPI_Start begins a round with a new status). The receives are in `receives`: host
// memory, the base MPI's own requests, or the space under test, the library's requests on a device.
void statuses_seen_by_get_status(const Env& e, MemorySpace& receives) {
  const MPI_Count n = 500;
  SpaceBuffer<int> in(receives, std::vector<int>(static_cast<std::size_t>(n) + 1, kSentinel));
  MPI_Request receive;
  MPI_Recv_init(in.data(), static_cast<int>(n), MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &receive);
  for (int form = 0; form < 8; ++form) {
    for (int round = 0; round < 2; ++round) {
      const Completion how = static_cast<Completion>(form);
      const int tag = 100 + 2 * form + round;
      const std::string what = std::string(kCompletionNames[form]) + " after MPI_Request_get_status, receive in " +
                               receives.name() + ", round " + std::to_string(round) + ": ";
      in.upload(std::vector<int>(static_cast<std::size_t>(n) + 1, kSentinel));
      // The second request, for the any and some forms: a receive the left rank sends to only later.
      MPI_Request requests[2] = {receive, MPI_REQUEST_NULL};
      SpaceBuffer<int> later(receives, std::vector<int>{0}), one(receives, std::vector<int>{1});
      MPI_Irecv(later.data(), 1, MPI_INT, e.left(), 99, MPI_COMM_WORLD, &requests[1]);
      MPI_Start(&requests[0]);
      auto out = send_buffer(e, tag, n);
      MPI_Request send;
      MPI_Isend(out->data(), static_cast<int>(n), MPI_INT, e.right(), tag, MPI_COMM_WORLD, &send);
      MPI_Status seen;
      test_until_done([&](int* flag) { return MPI_Request_get_status(requests[0], flag, MPI_STATUS_IGNORE); });
      int flag = 0;
      MPI_Request_get_status(requests[0], &flag, &seen);
      e.checker.check(flag == 1 && status_names(seen, e.left(), tag, n),
                      what + "a second MPI_Request_get_status: " + describe(seen));
      MPI_Status status;
      const bool returned = complete_first(how, requests, &status);
      e.checker.check(returned, what + "returns the receive");
      if (returned) {
        e.checker.check(status_names(status, e.left(), tag, n), what + "the status: " + describe(status));
      } else {
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
      }
      e.checker.check(holds_message(in, e.left(), tag, n), what + "the data");
      MPI_Send(one.data(), 1, MPI_INT, e.right(), 99, MPI_COMM_WORLD);
      MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
      MPI_Wait(&send, MPI_STATUS_IGNORE);
      receive = requests[0];
    }
  }
  MPI_Request_free(&receive);
}

// The library's own MPI_Testall over an array that holds its persistent request (a send from the
// space) observes completion with MPI_Request_get_status: the persistent host receive beside it
// must keep its status, in MPI_Testall and in MPI_Waitall, the program never asking.
void statuses_beside_library_requests(const Env& e) {
  const MPI_Count n = 300;
  std::vector<int> in(static_cast<std::size_t>(n) + 1, kSentinel);
  auto out = send_buffer(e, 0, n);
  MPI_Request requests[2];
  MPI_Recv_init(in.data(), static_cast<int>(n), MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[0]);
  for (int round = 0; round < 4; ++round) {
    const int tag = 140 + round;
    out = send_buffer(e, tag, n);
    MPI_Send_init(out->data(), static_cast<int>(n), MPI_INT, e.right(), tag, MPI_COMM_WORLD, &requests[1]);
    MPI_Startall(2, requests);
    MPI_Status statuses[2];
    const bool testall = round % 2 == 0;
    const int done = testall ? test_until_done([&](int* f) { return MPI_Testall(2, requests, f, statuses); })
                             : MPI_Waitall(2, requests, statuses) == MPI_SUCCESS;
    const std::string what = std::string(testall ? "MPI_Testall" : "MPI_Waitall") +
                             " of a persistent host receive beside a persistent send, round " + std::to_string(round);
    e.checker.check(done == 1 && status_names(statuses[0], e.left(), tag, n), what + ": " + describe(statuses[0]));
    if (done != 1) MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    MPI_Request_free(&requests[1]);
  }
  MPI_Request_free(&requests[0]);
}

// Every completion call on an inactive persistent request returns at once, flag 1, empty status.
// The blocking forms come last: before the fix they never returned.
void expect_inactive(const Env& e, MPI_Request request, const std::string& when) {
  MPI_Request keep = request;
  int flag = 0;
  MPI_Status status = scribbled_status();
  int rc = MPI_Test(&keep, &flag, &status);
  e.checker.check(rc == MPI_SUCCESS && flag == 1 && is_empty(status) && keep == request,
                  "MPI_Test on an inactive persistent receive " + when + ": flag " + std::to_string(flag) + ", " +
                      describe(status));
  flag = 0;
  status = scribbled_status();
  rc = MPI_Request_get_status(request, &flag, &status);
  e.checker.check(rc == MPI_SUCCESS && flag == 1 && is_empty(status),
                  "MPI_Request_get_status on an inactive persistent receive " + when + ": flag " +
                      std::to_string(flag) + ", " + describe(status));
  MPI_Request pair[2] = {request, MPI_REQUEST_NULL};
  MPI_Status statuses[2] = {scribbled_status(), scribbled_status()};
  flag = 0;
  rc = MPI_Testall(2, pair, &flag, statuses);
  e.checker.check(rc == MPI_SUCCESS && flag == 1 && is_empty(statuses[0]) && pair[0] == request,
                  "MPI_Testall over an inactive persistent receive " + when + ": flag " + std::to_string(flag) +
                      ", " + describe(statuses[0]));
  statuses[0] = scribbled_status();
  rc = MPI_Waitall(2, pair, statuses);
  e.checker.check(rc == MPI_SUCCESS && is_empty(statuses[0]) && pair[0] == request,
                  "MPI_Waitall over an inactive persistent receive " + when + ": " + describe(statuses[0]));
  status = scribbled_status();
  rc = MPI_Wait(&keep, &status);
  e.checker.check(rc == MPI_SUCCESS && is_empty(status) && keep == request,
                  "MPI_Wait on an inactive persistent receive " + when + ": " + describe(status));
}

void inactive_persistent(const Env& e) {
  const MPI_Count n = 100;
  auto in = recv_buffer(e, n);
  auto out = send_buffer(e, 50, n);
  MPI_Request requests[2];
  MPI_Recv_init(in->data(), static_cast<int>(n), MPI_INT, e.left(), 50, MPI_COMM_WORLD, &requests[0]);
  MPI_Send_init(out->data(), static_cast<int>(n), MPI_INT, e.right(), 50, MPI_COMM_WORLD, &requests[1]);
  expect_inactive(e, requests[0], "never started");
  MPI_Startall(2, requests);
  MPI_Status statuses[2];
  const int rc = MPI_Waitall(2, requests, statuses);
  e.checker.check(rc == MPI_SUCCESS && holds_message(*in, e.left(), 50, n) && statuses[0].MPI_SOURCE == e.left() &&
                      statuses[0].MPI_TAG == 50,
                  "a persistent round completes with its message and status");
  expect_inactive(e, requests[0], "after a completed round");
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
}

// ---- MPI_Cancel of a started persistent receive, then a normal round ----
void cancel_persistent(const Env& e) {
  const MPI_Count n = 1000;
  auto in = recv_buffer(e, n);
  MPI_Request receive;
  MPI_Recv_init(in->data(), static_cast<int>(n), MPI_INT, e.left(), 70, MPI_COMM_WORLD, &receive);
  MPI_Start(&receive);
  const int cancel_rc = MPI_Cancel(&receive);
  MPI_Status status;
  const int wait_rc = MPI_Wait(&receive, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  e.checker.check(cancel_rc == MPI_SUCCESS && wait_rc == MPI_SUCCESS && cancelled == 1 && receive != MPI_REQUEST_NULL,
                  "a cancelled persistent receive reports cancelled, rc " + std::to_string(cancel_rc) + "/" +
                      std::to_string(wait_rc));
  const std::vector<int> untouched = in->download();
  e.checker.check(untouched == std::vector<int>(untouched.size(), kSentinel), "a cancelled receive leaves its buffer");
  MPI_Barrier(MPI_COMM_WORLD);  // every receive is withdrawn before any message of tag 70 is sent

  auto out = send_buffer(e, 70, n);
  MPI_Start(&receive);
  const int send_rc = MPI_Send(out->data(), static_cast<int>(n), MPI_INT, e.right(), 70, MPI_COMM_WORLD);
  const int rc = MPI_Wait(&receive, &status);
  MPI_Test_cancelled(&status, &cancelled);
  e.checker.check(send_rc == MPI_SUCCESS && rc == MPI_SUCCESS && cancelled == 0 && holds_message(*in, e.left(), 70, n),
                  "a persistent receive restarted after a cancel receives");
  MPI_Request_free(&receive);
}

// ---- Probes of MPI_PROC_NULL: answered at once, as MPI says, on every kind of communicator ----
bool proc_null_status(const MPI_Status& status) {
  int count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  return status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG && count == 0;
}

void proc_null_probes(const Env& e) {
  MPI_Status status;
  int rc = MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &status);
  e.checker.check(rc == MPI_SUCCESS && proc_null_status(status), "MPI_Probe(MPI_PROC_NULL), rc " + std::to_string(rc));
  int flag = 0;
  rc = MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  e.checker.check(rc == MPI_SUCCESS && flag == 1 && proc_null_status(status),
                  "MPI_Iprobe(MPI_PROC_NULL), rc " + std::to_string(rc));
  MPI_Message message = MPI_MESSAGE_NULL;
  rc = MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &message, &status);
  e.checker.check(rc == MPI_SUCCESS && message == MPI_MESSAGE_NO_PROC && proc_null_status(status),
                  "MPI_Mprobe(MPI_PROC_NULL), rc " + std::to_string(rc));
  auto in = recv_buffer(e, 4);
  rc = MPI_Mrecv(in->data(), 4, MPI_INT, &message, &status);
  e.checker.check(rc == MPI_SUCCESS && message == MPI_MESSAGE_NULL && proc_null_status(status),
                  "MPI_Mrecv of MPI_MESSAGE_NO_PROC, rc " + std::to_string(rc));
  flag = 0;
  message = MPI_MESSAGE_NULL;
  rc = MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &status);
  e.checker.check(rc == MPI_SUCCESS && flag == 1 && message == MPI_MESSAGE_NO_PROC && proc_null_status(status),
                  "MPI_Improbe(MPI_PROC_NULL), rc " + std::to_string(rc));
  MPI_Request request = MPI_REQUEST_NULL;
  rc = MPI_Imrecv(in->data(), 4, MPI_INT, &message, &request);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, &status);
  e.checker.check(rc == MPI_SUCCESS && proc_null_status(status), "MPI_Imrecv of MPI_MESSAGE_NO_PROC, rc " + std::to_string(rc));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int exit_code = kSkipExitCode;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<MemorySpace> space = space_option(argc, argv, "host");
  const std::string only = option(argc, argv, "--section", "all");
  auto wanted = [&](const char* section) { return only == "all" || only == section; };
  std::vector<Delivery> after_finalize;
  if (space) {
    Checker checker;
    const Env e{checker, *space, rank, size};
    if (wanted("inactive")) inactive_persistent(e);
    if (wanted("completion")) completion_is_seen(e);
    if (wanted("cancel")) cancel_persistent(e);
    if (wanted("proc-null-probes")) proc_null_probes(e);
    // Receives on host memory, which a communicator asserted device-only refuses.
    const bool host_receives = comm_alloc_kinds_assertion(MPI_COMM_WORLD) != "cuda:device";
    if (rank == 0 && !host_receives) std::printf("note: host receives left out: world is asserted device-only\n");
    HostMemory host;
    if (wanted("get-status")) {
      if (host_receives) statuses_seen_by_get_status(e, host);
      statuses_seen_by_get_status(e, *space);
    }
    if (wanted("testall-beside") && host_receives) statuses_beside_library_requests(e);
    if (wanted("free-persistent")) {
      free_active_persistent(e, 1000, 80, &after_finalize);
      free_active_persistent(e, 1000000, 81, &after_finalize);
    }
    exit_code = checker.finish(MPI_COMM_WORLD, "test_p2p_requests");
    if (wanted("free-nonblocking")) {
      // Last: from here on the freed receives are driven by nothing but MPI_Finalize.
      free_active_nonblocking(e, 1000, 90, &after_finalize);
      free_active_nonblocking(e, 1000000, 91, &after_finalize);
    }
  }
  MPI_Finalize();
  if (exit_code == 0) exit_code = check_deliveries(after_finalize, rank);
  after_finalize.clear();  // the buffers go before their memory space
  return exit_code;
}
