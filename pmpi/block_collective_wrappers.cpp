// Every entry point of pmpi/block_collectives.def (MPI_Alltoallw, the neighborhood collectives) in
// its blocking, nonblocking and persistent forms, int and large-count, with the same wrapper
// bodies as the routed collectives (pmpi/collective_wrapper_macros.h) over mcrp::BlockCall.
#include <mpi.h>

#include <utility>

#include "collectives/block_call.h"
#include "collectives/block_dispatch.h"
#include "collectives/widened_base.h"
#include "pmpi/collective_wrapper_macros.h"

// int forms; those of MPI_Neighbor_alltoallw reach the base MPI's _c forms (collectives/widened_base.h)
#define PMPI_Neighbor_alltoallw mcrp::widened_neighbor_alltoallw
#define PMPI_Ineighbor_alltoallw mcrp::widened_ineighbor_alltoallw
#define PMPI_Neighbor_alltoallw_init mcrp::widened_neighbor_alltoallw_init
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) \
  MCRP_ALL_FORMS(Name, NonblockingName, , kind, PARAMS, ARGS)
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS
#undef PMPI_Neighbor_alltoallw
#undef PMPI_Ineighbor_alltoallw
#undef PMPI_Neighbor_alltoallw_init

// large-count forms
#define MCRP_COUNT MPI_Count
#define MCRP_COUNTS const MPI_Count*
#define MCRP_DISPLS const MPI_Aint*
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) \
  MCRP_ALL_FORMS(Name, NonblockingName, _c, kind, PARAMS, ARGS)
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS
