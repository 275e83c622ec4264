// Every collective entry point, generated from pmpi/collectives.def. Each .def line expands to up to
// six forms: blocking, nonblocking (MPI_I<coll>) and persistent (MPI_<Coll>_init), each as the int
// form and the large-count (_c) form. All call one implementation (mcrp::run_collective on an
// mcrp::CollCall); the forms differ only in their trailing parameters and the PMPI function called.
#include <mpi.h>

#include <utility>

#include "collectives/call.h"
#include "collectives/dispatch.h"

#define MCRP_UNPAREN(...) __VA_ARGS__

// The base MPI's entry point as a lambda whose sendbuf/recvbuf/request/datatype/op parameters shadow
// the user's (so the staged path can substitute host copies and its own inner request, and fp16
// reductions a substitute type and op) -- ARGS then names the right values in both places. The
// variadic tail is what the form adds after ARGS: nothing, `, request`, or `, info, request`.
#define MCRP_BASE_PARAMETERS                                                                      \
  [[maybe_unused]] const void* sendbuf, [[maybe_unused]] void* recvbuf,                           \
      [[maybe_unused]] MPI_Request* request, [[maybe_unused]] MPI_Datatype datatype, \
      [[maybe_unused]] MPI_Op op
#define MCRP_BASE_LAMBDA(PNAME, ARGS, ...) \
  [&](MCRP_BASE_PARAMETERS) { return PNAME(MCRP_UNPAREN ARGS __VA_ARGS__); }

// Blocking forms also hand over the nonblocking entry point, for when they must not block inside
// the base MPI (mcrp::run_blocking_collective).
#define MCRP_BLOCKING_WRAPPER(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                  \
  extern "C" int NAME(MCRP_UNPAREN PARAMS) {                                                             \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, );                                                       \
    auto nonblocking = MCRP_BASE_LAMBDA(P##NONBLOCKING_NAME, ARGS, , request);                           \
    return mcrp::run_blocking_collective(mcrp::describe::kind ARGS, mcrp::BaseCall(base),                \
                                         mcrp::BaseCall(nonblocking));                                   \
  }

#define MCRP_NONBLOCKING_WRAPPER(NAME, kind, PARAMS, ARGS)                                                    \
  extern "C" int NAME(MCRP_UNPAREN PARAMS, MPI_Request* request) {                                           \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, , request);                                                  \
    return mcrp::run_collective(mcrp::describe::kind ARGS, mcrp::BaseCall(base), mcrp::Mode::nonblocking, \
                                request);                                                                    \
  }

// Persistent forms also hand over the nonblocking entry point, captured by value: a device-buffer
// persistent request starts it (through the router) at every MPI_Start, long after this returns.
#define MCRP_PERSISTENT_WRAPPER(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                     \
  extern "C" int NAME(MCRP_UNPAREN PARAMS, MPI_Info info, MPI_Request* request) {                             \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, , info, request);                                             \
    mcrp::OwnedBaseCall nonblocking = [=](MCRP_BASE_PARAMETERS) {                                             \
      return P##NONBLOCKING_NAME(MCRP_UNPAREN ARGS, request);                                                 \
    };                                                                                                        \
    return mcrp::run_persistent_init(mcrp::describe::kind ARGS, mcrp::BaseCall(base), std::move(nonblocking), \
                                     request);                                                                 \
  }

#define MCRP_IF_LARGE_0(...)
#define MCRP_IF_LARGE_1(...) __VA_ARGS__

// int forms
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) \
  MCRP_BLOCKING_WRAPPER(MPI_##Name, MPI_##NonblockingName, kind, PARAMS, ARGS) \
  MCRP_NONBLOCKING_WRAPPER(MPI_##NonblockingName, kind, PARAMS, ARGS)        \
  MCRP_PERSISTENT_WRAPPER(MPI_##Name##_init, MPI_##NonblockingName, kind, PARAMS, ARGS)
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS

// large-count forms
#define MCRP_COUNT MPI_Count
#define MCRP_COUNTS const MPI_Count*
#define MCRP_DISPLS const MPI_Aint*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS)     \
  MCRP_IF_LARGE_##large(MCRP_BLOCKING_WRAPPER(MPI_##Name##_c, MPI_##NonblockingName##_c, kind, PARAMS, ARGS) \
  MCRP_NONBLOCKING_WRAPPER(MPI_##NonblockingName##_c, kind, PARAMS, ARGS)         \
  MCRP_PERSISTENT_WRAPPER(MPI_##Name##_init_c, MPI_##NonblockingName##_c, kind, PARAMS, ARGS))
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS
