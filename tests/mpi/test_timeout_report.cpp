// The report the library prints when MCRPMPI_NCCL_TIMEOUT first expires in a process
// (runtime/state_report.h): which NCCL communicators have work in flight, which threads wait for
// what, who holds the launch lock, which requests are in flight. This program makes the situations;
// its registration (tests/fake_nccl/tests.cmake) judges the report by its output, and the program
// checks that every call ends in bounded time (never a hang) with an error or a right result.
//
// --case stuck: three communicators, each set up by a device allreduce that every rank makes. Then
// the last rank sleeps past the timeout while the others start, on each communicator, one call
// its NCCL kernel waits in: a thread's blocking MPI_Allreduce on the first, 1 s later another
// thread's on the second, 1.5 s later the main thread's MPI_Iallreduce + MPI_Wait on the third. The
// first to time out reports all three waits, the other two still under way. At 2.5 s, before any
// timeout, a fourth thread of the early ranks asks for the same report (mcrpmpi_report_state).
// --case setup: the last rank sleeps past the timeout before the first device call on a fresh
// communicator: the others' NCCL setup times out, and the report says so.
//
// Run with MCRPMPI_NCCL_TIMEOUT set to a few seconds, on the NCCL path (the fake device with the
// fake NCCL, or --space device on a GPU), at least 2 ranks, MPI_THREAD_MULTIPLE.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/late_peer.h"
#include "tests/mpi/memory_spaces.h"

extern "C" void mcrpmpi_report_state(const char* why);  // runtime/state_report.h

namespace {

using namespace mcrp_test;

class TimeoutReport {
 public:
  TimeoutReport(Checker& checker, MemorySpace& space, double timeout)
      : checker_(checker), space_(space), timeout_(timeout) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    late_ = rank_ == size_ - 1;
  }

  void check_stuck_call(const AllreduceOutcome& o, const std::string& what) {
    check_late_peer_outcome(checker_, o, late_, timeout_, what);
  }

  void stuck() {
    std::vector<MPI_Comm> comms(3, MPI_COMM_NULL);
    for (MPI_Comm& comm : comms) {
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      const AllreduceOutcome warm = device_allreduce(space_, comm, false);
      checker_.check(warm.rc == MPI_SUCCESS && warm.right, "warm-up device allreduce: its NCCL communicator works");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (late_) sleep(static_cast<unsigned>(timeout_ + 2));
    AllreduceOutcome first, second;
    std::thread asker([&] {
      if (late_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      mcrpmpi_report_state("test_timeout_report asked at 2.5 s");
    });
    std::thread first_thread([&] { first = device_allreduce(space_, comms[0], false); });
    std::thread second_thread([&] {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      second = device_allreduce(space_, comms[1], false);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const AllreduceOutcome third = device_allreduce(space_, comms[2], true);
    first_thread.join();
    second_thread.join();
    asker.join();
    check_stuck_call(first, "a thread's MPI_Allreduce on the first communicator");
    check_stuck_call(second, "another thread's MPI_Allreduce on the second");
    check_stuck_call(third, "MPI_Iallreduce + MPI_Wait on the third");
    for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  }

  void setup() {
    MPI_Comm fresh = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    if (late_) sleep(static_cast<unsigned>(timeout_ + 2));
    check_stuck_call(device_allreduce(space_, fresh, false), "the first MPI_Allreduce on a fresh communicator");
    MPI_Comm_free(&fresh);
  }

 private:
  Checker& checker_;
  MemorySpace& space_;
  double timeout_;
  int rank_ = 0;
  int size_ = 1;
  bool late_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const double seconds = nccl_timeout_seconds();
  const std::string which = option(argc, argv, "--case", "stuck");
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (seconds <= 0 || seconds > 60 || size < 2 || (which != "stuck" && which != "setup")) {
    std::fprintf(stderr,
                 "test_timeout_report: MCRPMPI_NCCL_TIMEOUT of a few seconds, 2 or more ranks, --case stuck|setup\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string space_name = option(argc, argv, "--space", "fake-device");
  int exit_code = kSkipExitCode;
  {
    // A failed MPI_Wait on the library's request is raised on MPI_COMM_WORLD's handler.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space && provided < MPI_THREAD_MULTIPLE) {
      Checker checker;
      checker.skip("the base MPI gives no MPI_THREAD_MULTIPLE");
      exit_code = checker.finish(MPI_COMM_WORLD, "test_timeout_report");
    } else if (space) {
      Checker checker;
      TimeoutReport report(checker, *space, seconds);
      if (which == "stuck") report.stuck();
      if (which == "setup") report.setup();
      exit_code =
          checker.finish(MPI_COMM_WORLD, ("test_timeout_report --case " + which + " --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
