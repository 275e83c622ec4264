// A peer that never comes (issue 13, item 3): the last rank sleeps past MCRPMPI_NCCL_TIMEOUT before
// entering a device-buffer MPI_Allreduce that the others have entered. The others must get an MPI
// error naming the call within the timeout plus a margin (never a hang), the MPI communicator must
// stay usable for host calls, further device calls on it must fail on every rank within a bounded
// time (its NCCL communicator is stopped), and a duplicate must get a fresh, working one. Then the
// same with MPI_Iallreduce + MPI_Wait on the duplicate: the wait must end in time too.
//
// Run with MCRPMPI_NCCL_TIMEOUT set (a few seconds), and on the NCCL path: a GPU (--space device) or
// the fake device with the test suite's fake NCCL (--space fake-device, tests/fake_nccl).
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/late_peer.h"
#include "tests/mpi/memory_spaces.h"

using namespace mcrp_test;

namespace {

std::string error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return text;
}

class StuckPeer {
 public:
  StuckPeer(Checker& checker, MemorySpace& space, MPI_Comm comm, double timeout)
      : checker_(checker), space_(space), comm_(comm), timeout_(timeout) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  // The last rank sleeps past the timeout before its call; the others' call must fail in time, with
  // an error that names the call and the timeout.
  void stuck_call(MPI_Comm comm, bool nonblocking) {
    const std::string form = nonblocking ? "MPI_Iallreduce + MPI_Wait" : "MPI_Allreduce";
    const char* call = nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce";
    const bool late = rank_ == size_ - 1;
    if (late) sleep(static_cast<unsigned>(timeout_ + 2));
    const AllreduceOutcome outcome = device_allreduce(space_, comm, nonblocking);
    check_late_peer_outcome(checker_, outcome, late, timeout_, form);
    if (!late) {
      const std::string text = outcome.rc == MPI_SUCCESS ? "" : error_text(outcome.rc);
      checker_.check(text.find(call) != std::string::npos && text.find("MCRPMPI_NCCL_TIMEOUT") != std::string::npos,
                     form + ": the error names the call and the timeout: " + text);
    }
  }

  void run() {
    const AllreduceOutcome warm = device_allreduce(space_, comm_);
    checker_.check(warm.rc == MPI_SUCCESS && warm.right, "warm-up device allreduce: the NCCL communicator works");
    MPI_Barrier(comm_);

    stuck_call(comm_, false);

    // Host calls on the same communicator still work.
    int mine = rank_ + 1, sum = 0;
    const int rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm_);
    checker_.check(rc == MPI_SUCCESS && sum == size_ * (size_ + 1) / 2, "host allreduce on the communicator afterwards");

    // Device calls on it fail on every rank, within a bounded time (no rank waits forever for
    // peers whose NCCL communicator has stopped).
    const AllreduceOutcome again = device_allreduce(space_, comm_);
    checker_.check(again.seconds <= timeout_ + kLatePeerMarginSeconds, "a later device call returns in bounded time");
    int failed_here = again.rc != MPI_SUCCESS ? 1 : 0, failed_everywhere = 0;
    MPI_Allreduce(&failed_here, &failed_everywhere, 1, MPI_INT, MPI_MIN, comm_);
    checker_.check(failed_everywhere == 1, "a later device call on the stopped communicator fails on every rank");

    // A duplicate gets its own NCCL communicator.
    MPI_Comm fresh = MPI_COMM_NULL;
    MPI_Comm_dup(comm_, &fresh);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    const AllreduceOutcome on_duplicate = device_allreduce(space_, fresh);
    checker_.check(on_duplicate.rc == MPI_SUCCESS && on_duplicate.right,
                   "device allreduce on a duplicate of the communicator works");
    stuck_call(fresh, true);
    MPI_Comm_free(&fresh);
  }

 private:
  Checker& checker_;
  MemorySpace& space_;
  MPI_Comm comm_;
  double timeout_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double seconds = nccl_timeout_seconds();
  if (seconds <= 0 || seconds > 60) {
    std::fprintf(stderr, "test_stuck_peer: set MCRPMPI_NCCL_TIMEOUT to a few seconds\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string space_name = option(argc, argv, "--space", "fake-device");
  int exit_code = kSkipExitCode;
  {
    // A failed MPI_Wait on the library's request is raised where MPICH raises a generalized
    // request's errors (MPI_COMM_WORLD's handler), so that one returns too.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, comm);
    if (space) {
      Checker checker;
      StuckPeer(checker, *space, comm, seconds).run();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_stuck_peer --space " + space_name).c_str());
    }
    MPI_Comm_free(&comm);
  }
  MPI_Finalize();
  return exit_code;
}
