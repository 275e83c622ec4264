// MPICH 4.0.2 and both wheels of tests/abi: MPI_Ibcast (and the persistent bcast) on an
// intercommunicator whose root is not rank 0 of its group delivers nothing (receivers keep their
// old contents; blocking MPI_Bcast is right). The library runs those bcasts itself
// (collectives/intercomm_bcast.h); the tests probe the base MPI alone, with PMPI_, to know which
// of their cases are checks beyond it.
#pragma once
#include <mpi.h>

namespace mcrp_test {

// On `inter`, where this rank is `rank` of group `group` (0 or 1) and group 0 has `group0_size`
// ranks: whether a PMPI_Ibcast from rank 1 of group 0 leaves group 1's buffers as they were on any
// rank. Collective over `inter` and MPI_COMM_WORLD (every rank of both groups calls it).
inline bool base_ibcast_drops_nonzero_root(MPI_Comm inter, int group, int rank, int group0_size) {
  if (group0_size < 2) return false;  // no rank 1 to be the root
  int value = group == 0 && rank == 1 ? 42 : -1;
  const int root = group == 0 ? (rank == 1 ? MPI_ROOT : MPI_PROC_NULL) : 1;
  MPI_Request request = MPI_REQUEST_NULL;
  PMPI_Ibcast(&value, 1, MPI_INT, root, inter, &request);
  PMPI_Wait(&request, MPI_STATUS_IGNORE);
  const int wrong = group == 1 && value != 42 ? 1 : 0;
  int anywhere = 0;
  PMPI_Allreduce(&wrong, &anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return anywhere != 0;
}

}  // namespace mcrp_test
