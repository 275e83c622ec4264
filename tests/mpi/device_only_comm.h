// A duplicate of a communicator carrying the MPI 4.1 assertion that its point-to-point buffers are
// device memory (mpi_assert_memory_alloc_kinds=cuda:device): the library's device-only protocol
// (docs/point-to-point.md, "Device-only communicators") runs on it. Collective over `comm`; the caller frees it.
#pragma once
#include <mpi.h>

namespace mcrp_test {

// A new info object holding the assertion; the caller frees it.
inline MPI_Info device_only_info() {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:device");
  return info;
}

inline MPI_Comm dup_asserting_device_only(MPI_Comm comm) {
  MPI_Info info = device_only_info();
  MPI_Comm duplicate;
  MPI_Comm_dup_with_info(comm, info, &duplicate);
  MPI_Info_free(&info);
  return duplicate;
}

}  // namespace mcrp_test
