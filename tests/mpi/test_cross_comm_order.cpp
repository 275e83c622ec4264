// Cross-communicator reordering (issue 3, guarantee 2) on host buffers; the device-buffer run of the
// same patterns is in tests/gpu/test_nonblocking_gpu.cpp. See tests/mpi/cross_comm_order.cpp.
#include <mpi.h>

#include "tests/mpi/check.h"
#include "tests/mpi/cross_comm_order.h"
#include "tests/mpi/memory_space.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  mcrp_test::Checker checker;
  mcrp_test::HostMemory host;
  for (int n : {0, 1, 1000}) mcrp_test::check_cross_comm_order(checker, MPI_COMM_WORLD, host, n);
  const int rc = checker.finish(MPI_COMM_WORLD, "test_cross_comm_order");
  MPI_Finalize();
  return rc;
}
