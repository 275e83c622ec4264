// Every collective entry point, generated from pmpi/collectives.def. Each .def line expands to up to
// six forms: blocking, nonblocking (MPI_I<coll>) and persistent (MPI_<Coll>_init), each as the int
// form and the large-count (_c) form. All call one implementation (mcrp::run_collective on an
// mcrp::CollCall); the forms differ only in their trailing parameters and the PMPI function called.
#include <mpi.h>

#include <utility>

#include "collectives/call.h"
#include "collectives/dispatch.h"
#include "pmpi/collective_wrapper_macros.h"

#define MCRP_IF_LARGE_0(...)
#define MCRP_IF_LARGE_1(...) __VA_ARGS__

// int forms
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
  MCRP_ALL_FORMS(Name, NonblockingName, , kind, PARAMS, ARGS)
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS

// large-count forms
#define MCRP_COUNT MPI_Count
#define MCRP_COUNTS const MPI_Count*
#define MCRP_DISPLS const MPI_Aint*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
  MCRP_IF_LARGE_##large(MCRP_ALL_FORMS(Name, NonblockingName, _c, kind, PARAMS, ARGS))
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS
