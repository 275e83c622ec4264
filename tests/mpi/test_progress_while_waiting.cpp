// Rule 2: a rank waiting inside the library keeps the base MPI's own traffic moving. Odd ranks
// send their even neighbour a message of host memory large enough to need the sender's progress
// (a rendezvous: 1 MiB), then enter a collective on device buffers on another communicator, which
// the receiver joins only once it has the message. On the NCCL path the sender waits in the
// library's own loop; until 2026-11-28 that loop probed a duplicate of MPI_COMM_SELF for
// progress, which MPICH 4.0.2 (ch4:ucx) answers without advancing anything else, so the message
// never left and both ranks hung (found by test_p2p_random with a device-only communicator).
// The sends: MPI_Isend, MPI_Bsend and MPI_Issend; the collectives: a blocking MPI_Allreduce, and an
// MPI_Iallreduce completed by MPI_Wait. Any space (--space S); a hang fails by the test's timeout.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/mpi/bsend_space.h"
#include "tests/mpi/check.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr int kMessageInts = 1 << 18;  // 1 MiB
constexpr int kReduceInts = 1024;

int payload(int sender, int i) { return sender * 7919 + i; }

enum class SendKind { isend, bsend, issend };
constexpr const char* kSendNames[] = {"MPI_Isend", "MPI_Bsend", "MPI_Issend"};

struct Env {
  Checker& checker;
  MemorySpace& space;
  MPI_Comm other;
  int rank;
  int size;
};

// Every rank's part of the collective on `other`: the sum of rank + 1 over the ranks, per element.
void collective(const Env& e, bool nonblocking, const std::string& what) {
  SpaceBuffer<int> in(e.space, std::vector<int>(kReduceInts, e.rank + 1));
  SpaceBuffer<int> out(e.space, std::vector<int>(kReduceInts, -1));
  int rc = MPI_SUCCESS;
  if (nonblocking) {
    MPI_Request request;
    rc = MPI_Iallreduce(in.data(), out.data(), kReduceInts, MPI_INT, MPI_SUM, e.other, &request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    rc = MPI_Allreduce(in.data(), out.data(), kReduceInts, MPI_INT, MPI_SUM, e.other);
  }
  const std::vector<int> expected(kReduceInts, e.size * (e.size + 1) / 2);
  const std::vector<int> got = out.download();
  e.checker.expect_equal(what + ": the collective's result", rc, got.data(), expected.data(), expected.size());
}

void run_case(const Env& e, SendKind kind, bool nonblocking) {
  const std::string what = std::string(kSendNames[static_cast<int>(kind)]) + " of 1 MiB of host memory, then " +
                           (nonblocking ? "MPI_Iallreduce + MPI_Wait" : "MPI_Allreduce") + " in " + e.space.name();
  const bool sender = e.rank % 2 == 1;
  const bool receiver = e.rank % 2 == 0 && e.rank + 1 < e.size;
  if (sender) {
    std::vector<int> message(kMessageInts);
    for (int i = 0; i < kMessageInts; ++i) message[static_cast<std::size_t>(i)] = payload(e.rank, i);
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    switch (kind) {
      case SendKind::isend: rc = MPI_Isend(message.data(), kMessageInts, MPI_INT, e.rank - 1, 5, MPI_COMM_WORLD, &request); break;
      case SendKind::bsend: rc = MPI_Bsend(message.data(), kMessageInts, MPI_INT, e.rank - 1, 5, MPI_COMM_WORLD); break;
      case SendKind::issend: rc = MPI_Issend(message.data(), kMessageInts, MPI_INT, e.rank - 1, 5, MPI_COMM_WORLD, &request); break;
    }
    collective(e, nonblocking, what);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    e.checker.check(rc == MPI_SUCCESS, what + ": the send (rc " + std::to_string(rc) + ")");
  } else if (receiver) {
    std::vector<int> got(kMessageInts + 1, -1);
    const int rc = MPI_Recv(got.data(), kMessageInts, MPI_INT, e.rank + 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::vector<int> expected(kMessageInts + 1, -1);
    for (int i = 0; i < kMessageInts; ++i) expected[static_cast<std::size_t>(i)] = payload(e.rank + 1, i);
    e.checker.expect_equal(what + ": the message", rc, got.data(), expected.data(), expected.size());
    collective(e, nonblocking, what);
  } else {
    collective(e, nonblocking, what);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int exit_code = kSkipExitCode;
  {
    const SendReceiveSpaces spaces = send_receive_spaces_from_arguments(argc, argv);
    if (spaces.ready()) {
      Checker checker;
      const BsendSpace bsend_space(MPI_Count{kMessageInts} * 4, 1);
      MPI_Comm other;
      MPI_Comm_dup(MPI_COMM_WORLD, &other);
      MPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);
      const Env e{checker, *spaces.recv, other, rank_of(MPI_COMM_WORLD), size_of(MPI_COMM_WORLD)};
      // Once before the cases: the first collective on a communicator sets up its NCCL communicator
      // through the base MPI, whose own waits would move the message.
      collective(e, false, "setting up");
      for (SendKind kind : {SendKind::isend, SendKind::bsend, SendKind::issend}) {
        for (bool nonblocking : {false, true}) run_case(e, kind, nonblocking);
      }
      MPI_Comm_free(&other);
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_progress_while_waiting --space " + spaces.recv_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
