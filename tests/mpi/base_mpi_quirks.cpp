#include "tests/mpi/base_mpi_quirks.h"

#include <cstdlib>
#include <cstring>

namespace mcrp_test {

namespace {

bool is_mpich_4_0() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  return std::strncmp(version, "MPICH Version:\t4.0", 18) == 0;
}

bool device_collectives_disabled() {
  const char* value = std::getenv("MPIR_CVAR_DEVICE_COLLECTIVES");
  return value != nullptr && std::strcmp(value, "none") == 0;
}

// Safe to probe: a 1-rank allgatherv on COMM_SELF, straight to the base MPI.
bool probe_single_rank_allgatherv() {
  int send = 5;
  int recv[2] = {-1, -1};
  const int count = 1;
  const int displ = 1;
  PMPI_Allgatherv(&send, 1, MPI_INT, recv, &count, &displ, MPI_INT, MPI_COMM_SELF);
  return recv[1] != 5;
}

}  // namespace

BaseMpiQuirks BaseMpiQuirks::detect() {
  BaseMpiQuirks quirks;
  quirks.library_present = MPIX_Query_cuda_support() == 1;  // the library answers 1, MPICH 0
  quirks.inplace_reduce_at_nonzero_root_crashes = is_mpich_4_0() && !device_collectives_disabled();
  quirks.inplace_reduce_scatter_large_aborts = is_mpich_4_0();
  quirks.single_rank_allgatherv_ignores_displs = probe_single_rank_allgatherv();
  return quirks;
}

}  // namespace mcrp_test
