// MPI's progress rule for the library's own nonblocking collectives: once every rank has started
// one, a rank waiting for it must get it, whatever call its peers sit in meanwhile. The next step of
// such an operation may be the library's to take on each rank (the NCCL setup of a fresh
// communicator, over the base MPI's MPI_Ibcast; a launch queued behind it), and a rank blocked inside
// the base MPI does not take it. test_coll_random found that hang (2026-11-29): three of four ranks
// in a host MPI_Barrier while the fourth waited for their MPI_Igather's setup.
//
// Each case, on a fresh duplicate of MPI_COMM_WORLD (so its device collective starts an NCCL setup
// where NCCL is loaded):
//   rank 0:  MPI_Iallreduce (device); X; MPI_Wait      every other rank:  MPI_Iallreduce; MPI_Wait; Y
// with X / Y:
//   recv     MPI_Recv of host ints from rank 1       / rank 1 sends them (MPI_Send)
//   probe    MPI_Probe, then MPI_Recv                 / the same
//   wait     MPI_Irecv, then MPI_Wait on it alone     / the same
//   barrier  MPI_Barrier(MPI_COMM_WORLD)              / every rank joins it (--with-barrier only: it
//            completes where the helper thread runs, MPI_THREAD_MULTIPLE or MCRPMPI_PROGRESS_THREAD=1,
//            or under MCRPMPI_POLLING_COLLECTIVES=1; docs/collectives.md "Nonblocking and persistent collectives")
//   dup      MPI_Comm_dup(MPI_COMM_WORLD)             / every rank makes it (--with-barrier only, as the
//            barrier, and the two below: blocking collectives of the base MPI's)
//   split    MPI_Comm_split(MPI_COMM_WORLD) by parity / the same
//   disconnect  MPI_Comm_disconnect of a duplicate made before the allreduce / the same (MPICH
//            4.0.2's does not wait for the peers, so this one passed before the meeting too)
// With NCCL loaded (the fake one in CI) the first three hung before 2026-11-29 (rank 0 blocked in
// the base MPI's receive, probe or wait); staged (asynchronous fake copies) they passed without the
// change too, and run as a control.
//   --space S (fake-device, device)  --init plain|multiple  --with-barrier
// A hang fails by the test's timeout.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr int kTag = 17;
constexpr int kHostInts = 64;
constexpr int kDeviceInts = 1000;

enum class Elsewhere { recv, probe, wait, barrier, dup, split, disconnect };
constexpr const char* kElsewhereNames[] = {"MPI_Recv",
                                           "MPI_Probe + MPI_Recv",
                                           "MPI_Irecv + MPI_Wait",
                                           "MPI_Barrier(MPI_COMM_WORLD)",
                                           "MPI_Comm_dup(MPI_COMM_WORLD)",
                                           "MPI_Comm_split(MPI_COMM_WORLD)",
                                           "MPI_Comm_disconnect"};

// Every rank makes a communicator from MPI_COMM_WORLD: a duplicate, or the ranks of its parity.
void make_communicator(Checker& checker, Elsewhere where, int rank, const std::string& what) {
  MPI_Comm made = MPI_COMM_NULL;
  const int rc = where == Elsewhere::dup ? MPI_Comm_dup(MPI_COMM_WORLD, &made)
                                         : MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &made);
  const int world = size_of(MPI_COMM_WORLD);
  const int expected = where == Elsewhere::dup ? world : (world + 1 - rank % 2) / 2;
  checker.check(rc == MPI_SUCCESS && made != MPI_COMM_NULL && size_of(made) == expected,
                what + ": the new communicator");
  if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
}

// X on rank 0, Y on the others: a host message from rank 1 to rank 0, or a barrier.
void elsewhere(Checker& checker, Elsewhere where, int rank, const std::string& what, MPI_Comm* spare) {
  std::vector<int> message(kHostInts);
  for (int i = 0; i < kHostInts; ++i) message[static_cast<std::size_t>(i)] = i * 13 + 5;
  if (where == Elsewhere::barrier) {
    checker.check(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, what + ": the barrier");
    return;
  }
  if (where == Elsewhere::dup || where == Elsewhere::split) {
    make_communicator(checker, where, rank, what);
    return;
  }
  if (where == Elsewhere::disconnect) {
    checker.check(MPI_Comm_disconnect(spare) == MPI_SUCCESS && *spare == MPI_COMM_NULL, what + ": the disconnect");
    return;
  }
  if (rank == 1) {
    checker.check(MPI_Send(message.data(), kHostInts, MPI_INT, 0, kTag, MPI_COMM_WORLD) == MPI_SUCCESS,
                  what + ": the host send");
  }
  if (rank != 0) return;
  std::vector<int> got(kHostInts, -1);
  int rc = MPI_SUCCESS;
  if (where == Elsewhere::probe) rc = MPI_Probe(1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (where == Elsewhere::wait) {
    MPI_Request request = MPI_REQUEST_NULL;
    rc = MPI_Irecv(got.data(), kHostInts, MPI_INT, 1, kTag, MPI_COMM_WORLD, &request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rc == MPI_SUCCESS) {
    rc = MPI_Recv(got.data(), kHostInts, MPI_INT, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  checker.expect_equal(what + ": the host message", rc, got.data(), message.data(), message.size());
}

void run_case(Checker& checker, MemorySpace& space, Elsewhere where, int rank, int size) {
  const std::string what = std::string("rank 0 in ") + kElsewhereNames[static_cast<int>(where)] + ", " + space.name();
  MPI_Comm fresh = MPI_COMM_NULL, spare = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  if (where == Elsewhere::disconnect) MPI_Comm_dup(MPI_COMM_WORLD, &spare);
  std::vector<int> input(kDeviceInts);
  for (int i = 0; i < kDeviceInts; ++i) input[static_cast<std::size_t>(i)] = (rank + 1) * (i % 7 + 1);
  SpaceBuffer<int> send(space, input);
  SpaceBuffer<int> recv(space, std::vector<int>(kDeviceInts + 1, -1));
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Iallreduce(send.data(), recv.data(), kDeviceInts, MPI_INT, MPI_SUM, fresh, &request);
  if (rank == 0) elsewhere(checker, where, rank, what, &spare);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (rank != 0) elsewhere(checker, where, rank, what, &spare);
  std::vector<int> expected(kDeviceInts + 1, -1);
  for (int i = 0; i < kDeviceInts; ++i) expected[static_cast<std::size_t>(i)] = size * (size + 1) / 2 * (i % 7 + 1);
  const std::vector<int> got = recv.download();
  checker.expect_equal(what + ": the device allreduce", rc, got.data(), expected.data(), expected.size());
  MPI_Comm_free(&fresh);
  if (spare != MPI_COMM_NULL) MPI_Comm_free(&spare);
}

}  // namespace

int main(int argc, char** argv) {
  const bool multiple = option(argc, argv, "--init", "plain") == "multiple";
  int provided = MPI_THREAD_SINGLE;
  if (multiple) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else MPI_Init(&argc, &argv);
  const int rank = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = space_option(argc, argv, "fake-device");
    if (size < 2) {
      if (rank == 0) std::printf("SKIP: needs 2 ranks or more\n");
    } else if (multiple && provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    } else if (space) {
      Checker checker;
      for (const Elsewhere where : {Elsewhere::recv, Elsewhere::probe, Elsewhere::wait, Elsewhere::barrier,
                                    Elsewhere::dup, Elsewhere::split, Elsewhere::disconnect}) {
        if (where >= Elsewhere::barrier && !flag(argc, argv, "--with-barrier")) continue;
        run_case(checker, *space, where, rank, size);
      }
      exit_code = checker.finish(MPI_COMM_WORLD, "test_owed_progress");
    }
  }
  MPI_Finalize();
  return exit_code;
}
