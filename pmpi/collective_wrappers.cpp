// Every collective entry point, generated from pmpi/collectives.def: the int form and the
// large-count (_c) form of each collective expand from the same line and call the same
// implementation (mcrp::run_collective on an mcrp::CollCall); only the count types differ.
#include <mpi.h>

#include "collectives/call.h"
#include "collectives/dispatch.h"

#define MCRP_UNPAREN(...) __VA_ARGS__

// The wrapper body: describe the call, and hand the router the base MPI's own entry point as a
// lambda whose sendbuf/recvbuf parameters shadow the user's (so the staged path can substitute host
// copies) -- ARGS then names the right buffers in both places.
#define MCRP_BLOCKING_WRAPPER(NAME, kind, PARAMS, ARGS)                                                   \
  extern "C" int NAME(MCRP_UNPAREN PARAMS) {                                                            \
    auto base = [&]([[maybe_unused]] const void* sendbuf, [[maybe_unused]] void* recvbuf, MPI_Request*) { \
      return P##NAME ARGS;                                                                               \
    };                                                                                                   \
    return mcrp::run_collective(mcrp::describe::kind ARGS, mcrp::BaseCall(base));                        \
  }

#define MCRP_IF_LARGE_0(...)
#define MCRP_IF_LARGE_1(...) __VA_ARGS__

// int forms
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
  MCRP_BLOCKING_WRAPPER(MPI_##Name, kind, PARAMS, ARGS)
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
  MCRP_IF_LARGE_##large(MCRP_BLOCKING_WRAPPER(MPI_##Name##_c, kind, PARAMS, ARGS))
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS
