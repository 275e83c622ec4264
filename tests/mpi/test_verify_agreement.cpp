// Issue 16, rule 2: with MCRPMPI_VERIFY=1, a check of the library's that fails on some ranks only
// (here: a negative count on the last rank, significant there) fails the call on every rank, with
// one error class, instead of leaving the other ranks waiting in a collective. The communicator
// stays usable afterwards. Run with the library linked and MCRPMPI_VERIFY=1 (host memory, and the
// fake device so the device-path checks run too); without VERIFY the other ranks would hang.
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/memory_spaces.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::string space_name = argc > 2 && std::strcmp(argv[1], "--space") == 0 ? argv[2] : "host";
  int exit_code = mcrp_test::kSkipExitCode;
  {
    std::unique_ptr<mcrp_test::MemorySpace> space = mcrp_test::make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      mcrp_test::Checker checker;
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      const bool culprit = rank == size - 1;
      mcrp_test::SpaceBuffer<int> send(*space, 4 * static_cast<std::size_t>(size));
      mcrp_test::SpaceBuffer<int> recv(*space, 4 * static_cast<std::size_t>(size));
      send.upload(std::vector<int>(4 * static_cast<std::size_t>(size), rank + 1));
      auto expect_count_error = [&](const std::string& what, int rc) {
        int error_class = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &error_class);
        checker.check(error_class == MPI_ERR_COUNT, what + " (rank " + std::to_string(rank) +
                                                        "): expected MPI_ERR_COUNT on every rank, got class " +
                                                        std::to_string(error_class));
      };
      // The count of an allreduce must agree across ranks; one rank's is negative.
      expect_count_error("allreduce, count -1 on the last rank",
                         MPI_Allreduce(send.data(), recv.data(), culprit ? -1 : 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      // Gather at root 0: the last rank's sendcount is negative (significant there only).
      expect_count_error("gather, sendcount -1 on the last rank",
                         MPI_Gather(send.data(), culprit ? -1 : 4, MPI_INT, recv.data(), 4, MPI_INT, 0, MPI_COMM_WORLD));
      // Nonblocking: the error comes at the call, on every rank, with no request left behind.
      MPI_Request request = MPI_REQUEST_NULL;
      expect_count_error("iallgather, sendcount -1 on the last rank",
                         MPI_Iallgather(send.data(), culprit ? -1 : 4, MPI_INT, recv.data(), 4, MPI_INT, MPI_COMM_WORLD,
                                        &request));
      checker.check(request == MPI_REQUEST_NULL, "iallgather after the error: no request left");
      // Still usable.
      const int rc = MPI_Allreduce(send.data(), recv.data(), 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      const std::vector<int> expected(4, size * (size + 1) / 2);
      const std::vector<int> got = recv.download();
      checker.expect_equal("allreduce after the errors", rc, got.data(), expected.data(), 4);
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_verify_agreement --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
