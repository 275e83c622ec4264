// A fresh communicator's NCCL setup while the process has kernels waiting for a peer, on
// MPI_THREAD_MULTIPLE (guarantee 2 of "Nonblocking and persistent collectives": no setup waits
// inside a thread that another thread's launch needs).
//
// Even ranks start an MPI_Iallreduce on communicator X, odd ranks one on Y: each kernel waits for
// the other parity's launch on the same communicator. A second thread then makes the first
// collective on a fresh communicator Z (its NCCL setup), and a third, a moment later, starts the
// MPI_Iallreduce on the other of X and Y, the launch the peers' kernels wait for. NCCL's setup call
// makes a page-locked allocation before it returns (even on a nonblocking communicator), which the
// CUDA guide lets wait for the kernels in flight. Made under the library's launch lock, as the
// nonblocking setup was until 2026-11-30, that wait kept the third thread's launch out on every
// rank: each rank's setup waited for its kernel, which waited for the peer's launch, which waited
// behind the peer's setup. The fake NCCL plays that allocation's wait when
// MCRPMPI_FAKE_NCCL_SETUP_WAITS=1 (tests/fake_nccl/device_model.h). A hang ends at
// MCRPMPI_NCCL_TIMEOUT with errors, or at the test's timeout.
//
// --space S (host, fake-device, device), --delay-ms N: how long the third thread waits after the
// first thread's start (default 300), so that the setup has begun.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr int kCount = 256;

// Rank r gives r + 1 + j + `salt` at element j; the sum over ranks is the reference.
std::vector<int> contribution(int rank, int salt) {
  std::vector<int> values(kCount);
  for (int j = 0; j < kCount; ++j) values[j] = rank + 1 + j + salt;
  return values;
}

std::vector<int> sum_over_ranks(int size, int salt) {
  std::vector<int> values(kCount, 0);
  for (int r = 0; r < size; ++r) {
    const std::vector<int> part = contribution(r, salt);
    for (int j = 0; j < kCount; ++j) values[j] += part[j];
  }
  return values;
}

// One allreduce's buffers and outcome; `salt` tells the communicators' results apart.
struct Reduction {
  Reduction(MemorySpace& space, MPI_Comm comm, int salt, std::string name)
      : comm(comm),
        salt(salt),
        name(std::move(name)),
        in(space, contribution(rank_of(comm), salt)),
        out(space, std::vector<int>(kCount, -1)) {}

  int start(MPI_Request* request) {
    return MPI_Iallreduce(in.data(), out.data(), kCount, MPI_INT, MPI_SUM, comm, request);
  }
  void run_nonblocking() {
    MPI_Request request = MPI_REQUEST_NULL;
    rc = start(&request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  void run_blocking() { rc = MPI_Allreduce(in.data(), out.data(), kCount, MPI_INT, MPI_SUM, comm); }
  void check(Checker& checker) const {
    const std::vector<int> got = out.download(), want = sum_over_ranks(size_of(comm), salt);
    checker.expect_equal(name, rc, got.data(), want.data(), want.size());
  }

  MPI_Comm comm;
  int salt;
  std::string name;
  SpaceBuffer<int> in, out;
  int rc = MPI_ERR_OTHER;  // until it ran
};

MPI_Comm duplicate_world() {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

void run(Checker& checker, MemorySpace& space, int delay_ms) {
  const int rank = rank_of(MPI_COMM_WORLD);
  MPI_Comm x = duplicate_world(), y = duplicate_world(), z = duplicate_world();
  {
    // X's and Y's NCCL communicators set up now, with nothing in flight: only Z's setup is left
    // for the threads.
    Reduction settle_x(space, x, 0, "X set up"), settle_y(space, y, 0, "Y set up");
    settle_x.run_blocking();
    settle_y.run_blocking();
    settle_x.check(checker);
    settle_y.check(checker);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const bool even = rank % 2 == 0;
  // The salt goes with the communicator (X 1, Y 2), which every member reduces with alike.
  Reduction first(space, even ? x : y, even ? 1 : 2, even ? "X first (even ranks)" : "Y first (odd ranks)");
  Reduction second(space, even ? y : x, even ? 2 : 1, even ? "Y second (even ranks)" : "X second (odd ranks)");
  Reduction fresh(space, z, 3, "fresh communicator Z, set up beside the first's kernel");
  std::atomic<bool> first_started{false};
  auto after_first = [&] {
    while (!first_started.load()) std::this_thread::yield();
  };
  std::thread starting_first([&] {
    MPI_Request request = MPI_REQUEST_NULL;
    first.rc = first.start(&request);
    first_started.store(true);
    if (first.rc == MPI_SUCCESS) first.rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  });
  std::thread setting_up([&] {
    after_first();
    fresh.run_blocking();
  });
  std::thread starting_second([&] {
    after_first();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    second.run_nonblocking();
  });
  starting_first.join();
  setting_up.join();
  starting_second.join();
  first.check(checker);
  second.check(checker);
  fresh.check(checker);
  for (MPI_Comm* comm : {&x, &y, &z}) checker.check(MPI_Comm_free(comm) == MPI_SUCCESS, "comm_free");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int exit_code = kSkipExitCode;
  {
    const std::string space_name = option(argc, argv, "--space", "host");
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space && provided < MPI_THREAD_MULTIPLE) {
      if (rank_of(MPI_COMM_WORLD) == 0) std::printf("SKIPPED: the base MPI does not provide MPI_THREAD_MULTIPLE\n");
    } else if (space) {
      Checker checker;
      run(checker, *space, std::atoi(option(argc, argv, "--delay-ms", "300").c_str()));
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_setup_beside_kernels --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
