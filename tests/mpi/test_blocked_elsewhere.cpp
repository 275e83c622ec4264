// MPI's progress rule on a communicator asserted device-only by the info key (docs/point-to-point.md,
// "Device-only communicators"): one rank of a pair starts a point-to-point operation and then blocks somewhere the
// library's protocol cannot answer from (inside the base MPI, or computing outside MPI), while its
// peer waits in the matching blocking call, which MPI says must complete. Until the library's helper
// thread (runtime/progress_thread.h) both ranks hung: the peer waited for a clear-to-send or a
// proposal that the blocked rank never sent.
//
// Cases, for both orders of the pair (world ranks 0 and 1: the proposer of the NCCL epochs is then
// the blocked rank or the waiting one), a rendezvous payload (1 MiB) and an eager one (16 B):
//   sender blocked:    MPI_Isend; X; MPI_Wait     against  MPI_Recv; X
//   receiver blocked:  MPI_Irecv; X; MPI_Wait     against  MPI_Send; X
// where X is MPI_Barrier on MPI_COMM_WORLD, MPI_Allreduce of host ints on MPI_COMM_WORLD, MPI_Barrier
// on the asserted communicator, or MPI_Comm_split of MPI_COMM_WORLD (every other rank joins X); or,
// for "computing", the blocked rank sleeps 1 s outside MPI (after a barrier, so that the sleep and
// the peer's call overlap) and the peer's call must return within 0.6 s (where the helper runs).
// Without MCRPMPI_POLLING_COLLECTIVES: programs that use the info key do not set it.
// The helper calls MPI, so it runs where the base MPI runs at MPI_THREAD_MULTIPLE: a program that
// asks for it, or any program under MCRPMPI_PROGRESS_THREAD=1, which raises the base MPI's level. The
// program checks the level it is told either way: MPI_Init_thread's `provided` and MPI_Query_thread
// say what it asked for.
//   --space S (host, fake-device, device)
//   --init plain|single|funneled|serialized|multiple   MPI_Init, or MPI_Init_thread at that level
//   --expect-helper yes|no   whether the library's helper must run (no: only the thread-level checks,
//                            since the cases would hang)
// A hang fails by the test's timeout.
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr int kTag = 21;
constexpr auto kComputing = std::chrono::milliseconds(1000);
constexpr double kComputingBound = 0.6;  // seconds the waiting peer may take while the other computes

enum class Blocked { sender, receiver };
enum class Elsewhere { barrier_world, allreduce_world, barrier_asserted, split_world, computing };
constexpr const char* kElsewhereNames[] = {"MPI_Barrier(MPI_COMM_WORLD)", "MPI_Allreduce of host ints on MPI_COMM_WORLD",
                                           "MPI_Barrier on the asserted communicator",
                                           "MPI_Comm_split(MPI_COMM_WORLD)", "computing outside MPI"};

int payload(int i) { return i * 31 + 7; }

struct Env {
  Checker& checker;
  MemorySpace& space;
  MPI_Comm asserted;
  int rank;
  int size;
  bool timed;  // the library's helper runs: a peer computing outside MPI cannot delay the waiting call
};

// X: what the blocked rank does between starting its operation and waiting for it, and what every
// other rank does once its own part is done.
void elsewhere(const Env& e, Elsewhere where, bool blocked_rank, const std::string& what) {
  switch (where) {
    case Elsewhere::barrier_world:
      e.checker.check(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, what + ": the barrier");
      break;
    case Elsewhere::allreduce_world: {
      int mine = e.rank + 1, sum = 0;
      const int rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      e.checker.check(rc == MPI_SUCCESS && sum == e.size * (e.size + 1) / 2, what + ": the allreduce's sum");
      break;
    }
    case Elsewhere::barrier_asserted:
      e.checker.check(MPI_Barrier(e.asserted) == MPI_SUCCESS, what + ": the barrier");
      break;
    case Elsewhere::split_world: {
      MPI_Comm part = MPI_COMM_NULL;
      const int rc = MPI_Comm_split(MPI_COMM_WORLD, e.rank % 2, e.rank, &part);
      e.checker.check(rc == MPI_SUCCESS && size_of(part) == (e.size + 1 - e.rank % 2) / 2, what + ": the split");
      if (part != MPI_COMM_NULL) MPI_Comm_free(&part);
      break;
    }
    case Elsewhere::computing:
      if (blocked_rank) std::this_thread::sleep_for(kComputing);
      break;
  }
}

void run_case(const Env& e, Blocked blocked, Elsewhere where, int blocked_rank, int waiting_rank, int ints) {
  const std::string what = std::string(blocked == Blocked::sender ? "sender" : "receiver") + " (rank " +
                           std::to_string(blocked_rank) + ") in " + kElsewhereNames[static_cast<int>(where)] +
                           ", " + std::to_string(ints * 4) + " B to rank " + std::to_string(waiting_rank) +
                           ", " + e.space.name();
  // The computing rank's sleep must overlap its peer's wait: a rank still sleeping in the previous
  // case (the other order of the pair) would start this one late.
  if (where == Elsewhere::computing) MPI_Barrier(MPI_COMM_WORLD);
  std::vector<int> message(static_cast<std::size_t>(ints));
  for (int i = 0; i < ints; ++i) message[static_cast<std::size_t>(i)] = payload(i);
  const bool sends = (e.rank == blocked_rank) == (blocked == Blocked::sender);
  const int peer = e.rank == blocked_rank ? waiting_rank : blocked_rank;
  // One int more than the message on the receiving side: a sentinel past its end.
  SpaceBuffer<int> buffer(e.space, sends ? message : std::vector<int>(static_cast<std::size_t>(ints) + 1, -1));
  int rc = MPI_SUCCESS;
  if (e.rank == blocked_rank) {
    MPI_Request request = MPI_REQUEST_NULL;
    rc = sends ? MPI_Isend(buffer.data(), ints, MPI_INT, peer, kTag, e.asserted, &request)
               : MPI_Irecv(buffer.data(), ints, MPI_INT, peer, kTag, e.asserted, &request);
    elsewhere(e, where, true, what);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (e.rank == waiting_rank) {
    const double start = MPI_Wtime();
    rc = sends ? MPI_Send(buffer.data(), ints, MPI_INT, peer, kTag, e.asserted)
               : MPI_Recv(buffer.data(), ints, MPI_INT, peer, kTag, e.asserted, MPI_STATUS_IGNORE);
    const double took = MPI_Wtime() - start;
    if (where == Elsewhere::computing && e.timed) {
      e.checker.check(took < kComputingBound, what + ": the waiting call returned while the peer computed (" +
                                                  std::to_string(took) + " s)");
    }
    elsewhere(e, where, false, what);
  } else {
    elsewhere(e, where, false, what);
    return;
  }
  if (sends) {
    e.checker.check(rc == MPI_SUCCESS, what + ": the send (rc " + std::to_string(rc) + ")");
  } else {
    std::vector<int> expected = message;
    expected.push_back(-1);
    const std::vector<int> got = buffer.download();
    e.checker.expect_equal(what + ": the message", rc, got.data(), expected.data(), expected.size());
  }
}

int level_named(const std::string& name) {
  if (name == "funneled") return MPI_THREAD_FUNNELED;
  if (name == "serialized") return MPI_THREAD_SERIALIZED;
  if (name == "multiple") return MPI_THREAD_MULTIPLE;
  return MPI_THREAD_SINGLE;  // "single", and "plain" (MPI_Init)
}

// The library's helper, or -1 without the library (plain MPICH).
int helper_running() {
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "mcrpmpi_progress_thread_running"));
  return query != nullptr ? query() : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string init = option(argc, argv, "--init", "plain");
  const int asked = level_named(init);
  int provided = -1;
  if (init == "plain") {
    MPI_Init(&argc, &argv);
  } else {
    MPI_Init_thread(&argc, &argv, asked, &provided);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int exit_code = kSkipExitCode;
  {
    const std::unique_ptr<MemorySpace> space = space_option(argc, argv, "fake-device");
    if (space) {
      Checker checker;
      int queried = -1;
      MPI_Query_thread(&queried);
      if (init != "plain") checker.check(provided == asked, "MPI_Init_thread's provided is the level asked for (" + init + ")");
      checker.check(queried == asked, "MPI_Query_thread says the level asked for (" + init + ")");
      MPI_Comm asserted = dup_asserting_device_only(MPI_COMM_WORLD);
      MPI_Comm_set_errhandler(asserted, MPI_ERRORS_RETURN);
      const int helper = helper_running();
      const bool expect_helper = option(argc, argv, "--expect-helper", "yes") == "yes";
      if (helper >= 0) checker.check(helper == (expect_helper ? 1 : 0), "the library's helper thread runs as expected");
      // Plain MPICH may need the sender's own progress for a rendezvous: it is not timed.
      const Env e{checker, *space, asserted, rank_of(MPI_COMM_WORLD), size_of(MPI_COMM_WORLD), helper == 1};
      if (e.size < 2) {
        checker.skip("one rank: no pair");
      } else if (!expect_helper) {
        checker.skip("no helper expected: the cases would hang");
      } else {
        for (Blocked blocked : {Blocked::sender, Blocked::receiver}) {
          for (Elsewhere where : {Elsewhere::barrier_world, Elsewhere::allreduce_world, Elsewhere::barrier_asserted,
                                  Elsewhere::split_world, Elsewhere::computing}) {
            for (int ints : {1 << 18, 4}) {
              run_case(e, blocked, where, 0, 1, ints);
              run_case(e, blocked, where, 1, 0, ints);
            }
          }
        }
      }
      MPI_Comm_free(&asserted);
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_blocked_elsewhere --init " + init).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
