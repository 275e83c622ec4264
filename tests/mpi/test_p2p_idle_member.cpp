// A member of a device-only communicator that makes no MPI call for a while (computing, as a
// pipeline stage does) must not hold up the others' point-to-point on it. Ranks 0 and 1 exchange
// payloads large enough to go by rendezvous on the channel (NCCL) while the last rank sleeps longer
// than MCRPMPI_NCCL_TIMEOUT outside MPI: the exchange must complete, right, well before the sleeper
// comes back. (The NCCL communicator of such a communicator is set up when the assertion is made,
// while every member is in that collective call; set up at the first rendezvous instead, it would
// wait for the sleeper and fail at the timeout.)
//
// Run with 3+ ranks on the NCCL channel: a GPU (--space device) or the fake device with the test
// suite's fake NCCL (--space fake-device, MCRPMPI_P2P_CHANNEL=nccl), MCRPMPI_NCCL_TIMEOUT a few seconds.
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
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/memory_spaces.h"

using namespace mcrp_test;

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;  // far above the eager limit: rendezvous

void exchange(Checker& checker, MemorySpace& space, MPI_Comm comm, int rank, double bound) {
  const int peer = 1 - rank;
  std::vector<char> mine(kBytes), theirs(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) {
    mine[i] = static_cast<char>((i * 7 + rank * 13) & 0x7f);
    theirs[i] = static_cast<char>((i * 7 + peer * 13) & 0x7f);
  }
  SpaceBuffer<char> send(space, mine);
  SpaceBuffer<char> recv(space, std::vector<char>(kBytes, 0));
  const auto start = std::chrono::steady_clock::now();
  const int rc = MPI_Sendrecv(send.data(), static_cast<int>(kBytes), MPI_CHAR, peer, 5, recv.data(),
                              static_cast<int>(kBytes), MPI_CHAR, peer, 5, comm, MPI_STATUS_IGNORE);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  checker.check(rc == MPI_SUCCESS && recv.download() == theirs, "1 MiB Sendrecv between ranks 0 and 1: right data");
  checker.check(took < bound, "it does not wait for the idle member: " + std::to_string(took) + " s");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string space_name = option(argc, argv, "--space", "fake-device");
  const char* timeout_text = std::getenv("MCRPMPI_NCCL_TIMEOUT");
  const double timeout = timeout_text != nullptr ? std::atof(timeout_text) : 0;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3 || timeout <= 0 || timeout > 30) {
    if (rank == 0) std::fprintf(stderr, "test_p2p_idle_member: needs 3+ ranks and MCRPMPI_NCCL_TIMEOUT of a few seconds\n");
    MPI_Finalize();
    return size < 3 ? kSkipExitCode : 2;
  }
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      MPI_Comm comm = dup_asserting_device_only(MPI_COMM_WORLD);
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      Checker checker;
      if (rank == size - 1) {
        sleep(static_cast<unsigned>(timeout) + 3);  // computing, outside MPI
      } else if (rank < 2) {
        exchange(checker, *space, comm, rank, timeout * 0.75);
      }
      MPI_Comm_free(&comm);
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_p2p_idle_member --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
