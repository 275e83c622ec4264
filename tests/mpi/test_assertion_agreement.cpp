// The device-only assertion (mpi_assert_memory_alloc_kinds=cuda:device) made in every way a
// communicator takes it from an info: MPI_Comm_dup_with_info, MPI_Comm_set_info, MPI_Comm_split_type
// and MPI_Dist_graph_create_adjacent, plus an MPI_Comm_dup of an asserted one. Every rank asserts.
// Whether the library agrees on it is decided from the WORLD map, alike on every member, so ranks
// that differ in having CUDA (mpiexec MPMD sections, some with the fake device and some without) must
// neither hang (a rank skipping the agreement the others enter did, in every MPI_Comm_split_type) nor
// assert anything; ranks that all have it assert every one.
//
//   test_assertion_agreement --expect asserted|none
// `asserted`: MPI_Comm_get_info shows the assertion on every communicator; `none`: on none, and host
// buffers work on each. Every rank lists cuda in mpi_memory_alloc_kinds either way.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/alloc_kinds_info.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/device_only_comm.h"

using namespace mcrp_test;

namespace {

// The communicators, each made with the assertion on every rank.
std::vector<std::pair<std::string, MPI_Comm>> asserted_communicators(int rank, int size) {
  MPI_Info info = device_only_info();
  std::vector<std::pair<std::string, MPI_Comm>> made;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
  made.emplace_back("MPI_Comm_dup_with_info", comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_info(comm, info);
  made.emplace_back("MPI_Comm_set_info", comm);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &comm);
  made.emplace_back("MPI_Comm_split_type", comm);
  const int from[] = {(rank + size - 1) % size}, to[] = {(rank + 1) % size};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, from, MPI_UNWEIGHTED, 1, to, MPI_UNWEIGHTED, info, 0, &comm);
  made.emplace_back("MPI_Dist_graph_create_adjacent", comm);
  MPI_Comm_dup(made.front().second, &comm);
  made.emplace_back("MPI_Comm_dup of an asserted communicator", comm);
  MPI_Info_free(&info);
  return made;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool expect_asserted = option(argc, argv, "--expect", "none") == "asserted";
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker checker;
  checker.check(times_listed(comm_alloc_kinds(MPI_COMM_WORLD), "cuda") == 1,
                "mpi_memory_alloc_kinds lists cuda, with CUDA or without");
  for (auto& [name, comm] : asserted_communicators(rank, size)) {
    const std::string shown_assertion = comm_alloc_kinds_assertion(comm);
    if (expect_asserted) {
      checker.check(shown_assertion == "cuda:device", name + ": asserted on every rank");
    } else {
      checker.check(shown_assertion.empty(), name + ": not asserted where a member has no CUDA, got \"" +
                                                 shown_assertion + "\"");
      std::vector<int> out(16, rank), in(16, -1);
      const int left = (rank + size - 1) % size, right = (rank + 1) % size;
      const int rc = MPI_Sendrecv(out.data(), 16, MPI_INT, right, 3, in.data(), 16, MPI_INT, left, 3, comm,
                                  MPI_STATUS_IGNORE);
      checker.check(rc == MPI_SUCCESS && in == std::vector<int>(16, left), name + ": host buffers work");
    }
    MPI_Comm_free(&comm);
  }
  const int exit_code = checker.finish(MPI_COMM_WORLD, "test_assertion_agreement");
  MPI_Finalize();
  return exit_code;
}
