#include "tests/mpi/base_mpi_quirks.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mcrp_test {

namespace {

// MPICH's major and minor version from MPI_Get_library_version ("MPICH Version:\t4.0.2" from
// Debian, "MPICH Version:      5.0.2" from the pip wheel); 0 for other MPIs (Intel MPI says "Intel(R)
// MPI Library ...").
int mpich_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const char prefix[] = "MPICH Version:";
  if (std::strncmp(version, prefix, sizeof prefix - 1) != 0) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(version + sizeof prefix - 1, " %d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor;
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
  const int mpich = mpich_version();
  quirks.inplace_reduce_at_nonzero_root_crashes = mpich == 400 && !device_collectives_disabled();
  quirks.inplace_reduce_scatter_large_aborts = mpich >= 400 && mpich <= 500;  // 4.0.2-5.0.2 seen
  quirks.reduction_datatype_null_aborts = mpich == 500;
  quirks.narrow_neighbor_alltoallw_swaps_degrees = mpich == 400;
  quirks.intercomm_reduce_rejects_null_root_sendbuf = mpich == 400;
  quirks.single_rank_allgatherv_ignores_displs = probe_single_rank_allgatherv();
  return quirks;
}

}  // namespace mcrp_test
