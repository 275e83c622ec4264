// A peer killed in the middle of an NCCL collective (issue 13, item 3): the last rank starts a large
// device MPI_Iallreduce, lets its NCCL work begin, and kills itself with SIGKILL; the others are in
// the matching MPI_Allreduce. The job must end within a bounded time with no rank left behind.
// Two things can end it, and tests/mpi/killed_peer.sh runs both:
//  - the launcher: hydra ends the whole job when a rank dies (its default);
//  - the library alone (`mpiexec -disable-auto-cleanup`): a survivor's call must fail (NCCL's
//    remote error, or MCRPMPI_NCCL_TIMEOUT) instead of waiting forever; the survivor then reports the
//    error (stdout, and a file for the driver), naming the call, and calls MPI_Abort as a program on
//    MPI_ERRORS_ARE_FATAL would.
// This program only plays the ranks; the driver script checks the outcome (exit status, time, no
// process left, the survivors' reports).
//
// Run on the NCCL path: a GPU (--space device) or the fake device with the test suite's fake NCCL
// (--space fake-device, tests/fake_nccl).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"

using namespace mcrp_test;

namespace {

constexpr std::size_t kWarmUpCount = 1024;
// 64 MiB of floats: many chunks of NCCL's (and the fake NCCL's 1 MiB rings') pipeline, so the victim
// dies with the transfer under way rather than before or after it.
constexpr std::size_t kCount = std::size_t{16} << 20;

std::string error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return text;
}

int device_allreduce(MemorySpace& space, MPI_Comm comm, std::size_t count, bool* right) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  SpaceBuffer<float> send(space, std::vector<float>(count, static_cast<float>(rank + 1)));
  SpaceBuffer<float> recv(space, std::vector<float>(count, -1.0f));
  const int rc = MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
  const float expected = static_cast<float>(size * (size + 1) / 2);
  *right = true;
  for (float v : recv.download()) *right = *right && v == expected;
  return rc;
}

// The launcher may drop a rank's last output when MPI_Abort ends the job, so the driver reads the
// victim's and survivors' reports from files in $KILLED_PEER_REPORTS when it is set.
void write_report(const char* report, const std::string& name) {
  const char* folder = std::getenv("KILLED_PEER_REPORTS");
  if (folder == nullptr) return;
  const std::string path = std::string(folder) + "/" + name + ".txt";
  if (std::FILE* file = std::fopen(path.c_str(), "w")) {
    std::fputs(report, file);
    std::fclose(file);
  }
}

[[noreturn]] void die_in_the_middle(MemorySpace& space, MPI_Comm comm, int rank) {
  // The share device_allreduce expects of this rank: when it all got out before the death, a
  // survivor's completed call must read as right.
  SpaceBuffer<float> send(space, std::vector<float>(kCount, static_cast<float>(rank + 1)));
  SpaceBuffer<float> recv(space, std::vector<float>(kCount, 0.0f));
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(send.data(), recv.data(), static_cast<int>(kCount), MPI_FLOAT, MPI_SUM, comm, &request);
  usleep(20 * 1000);  // the NCCL work is launched and moving
  const char* report = "killed_peer: victim raising SIGKILL\n";
  std::fputs(report, stdout);
  std::fflush(stdout);
  write_report(report, "victim");
  raise(SIGKILL);
  _exit(99);  // not reached
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string space_name = option(argc, argv, "--space", "fake-device");
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::unique_ptr<MemorySpace> space = make_memory_space(space_name, comm);
  if (!space || size < 2) {
    if (rank == 0) std::fprintf(stderr, "test_killed_peer: needs 2 or more ranks and the %s space\n", space_name.c_str());
    MPI_Finalize();
    return kSkipExitCode;
  }
  bool right = false;
  int rc = device_allreduce(*space, comm, kWarmUpCount, &right);
  int ok_here = rc == MPI_SUCCESS && right, ok_everywhere = 0;
  MPI_Allreduce(&ok_here, &ok_everywhere, 1, MPI_INT, MPI_MIN, comm);
  if (!ok_everywhere) {
    if (rank == 0) std::fprintf(stderr, "test_killed_peer: the warm-up device allreduce failed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    std::printf("killed_peer: warm-up done on %d ranks\n", size);
    std::fflush(stdout);
  }
  MPI_Barrier(comm);
  if (rank == size - 1) die_in_the_middle(*space, comm, rank);

  const auto start = std::chrono::steady_clock::now();
  rc = device_allreduce(*space, comm, kCount, &right);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char report[MPI_MAX_ERROR_STRING + 128] = "";
  if (rc == MPI_SUCCESS) {
    // Only possible if the victim's share had all been sent before it died; the result must then be right.
    std::snprintf(report, sizeof report, "killed_peer: rank %d: MPI_Allreduce completed after %.1f s, result %s\n",
                  rank, took, right ? "right" : "WRONG");
  } else {
    std::snprintf(report, sizeof report, "killed_peer: rank %d: MPI_Allreduce failed after %.1f s: %s\n", rank, took,
                  error_text(rc).c_str());
  }
  std::fputs(report, stdout);
  std::fflush(stdout);
  write_report(report, "rank-" + std::to_string(rank));
  MPI_Abort(MPI_COMM_WORLD, right && rc == MPI_SUCCESS ? 4 : 3);
  return 3;
}
