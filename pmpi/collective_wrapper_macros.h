// The wrapper bodies of every collective entry point, shared by the lists that generate them
// (pmpi/collectives.def, pmpi/block_collectives.def). Each expands to a call of one of three
// functions overloaded on what mcrp::describe::<kind> builds (mcrp::CollCall, mcrp::BlockCall):
// run_blocking_collective, run_collective, run_persistent_init.
#pragma once

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

// Blocking and nonblocking forms first ask mcrp::host_direct (collectives/host_direct.h) whether
// the call may go straight to the base MPI; if not, routed_<NAME> hands it to the router with what
// host_direct found. The direct path is a tail call and pays no stack frame for the routed one.
// Blocking forms also hand over the nonblocking entry point, for when they must not block inside
// the base MPI (mcrp::run_blocking_collective).
#define MCRP_BLOCKING_WRAPPER(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                \
  [[gnu::noinline]] static int routed_##NAME(MCRP_UNPAREN PARAMS, mcrp::HostDirect wrapper) {          \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, );                                                     \
    auto nonblocking = MCRP_BASE_LAMBDA(P##NONBLOCKING_NAME, ARGS, , request);                         \
    return mcrp::run_blocking_collective(mcrp::describe::kind ARGS, mcrp::BaseCall(base),              \
                                         mcrp::BaseCall(nonblocking), wrapper);                        \
  }                                                                                                    \
  extern "C" int NAME(MCRP_UNPAREN PARAMS) {                                                           \
    const mcrp::HostDirect verdict = mcrp::host_direct(mcrp::describe::kind ARGS, mcrp::Mode::blocking); \
    if (verdict.direct) return P##NAME ARGS;                                                           \
    return routed_##NAME(MCRP_UNPAREN ARGS, verdict);                                                  \
  }

#define MCRP_NONBLOCKING_WRAPPER(NAME, kind, PARAMS, ARGS)                                                  \
  [[gnu::noinline]] static int routed_##NAME(MCRP_UNPAREN PARAMS, MPI_Request* request,                 \
                                             mcrp::HostDirect wrapper) {                                 \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, , request);                                              \
    return mcrp::run_collective(mcrp::describe::kind ARGS, mcrp::BaseCall(base), mcrp::Mode::nonblocking, \
                                request, wrapper);                                                       \
  }                                                                                                        \
  extern "C" int NAME(MCRP_UNPAREN PARAMS, MPI_Request* request) {                                         \
    const mcrp::HostDirect verdict = mcrp::host_direct(mcrp::describe::kind ARGS, mcrp::Mode::nonblocking); \
    if (verdict.direct) return P##NAME(MCRP_UNPAREN ARGS, request);                                        \
    return routed_##NAME(MCRP_UNPAREN ARGS, request, verdict);                                             \
  }

// The names the lists give counts, displacements and datatypes arrays, bound to a persistent
// request's copies of them (mcrp::BaseArrays): `displs` is scatterv's send displacements and the
// receive ones of the others. Unused names cost nothing.
#define MCRP_KEPT_ARRAYS(kept)                                                                \
  [[maybe_unused]] const mcrp::ArrayArgument sendcounts(kept.sendcounts), sdispls(kept.sdispls), \
      recvcounts(kept.recvcounts), rdispls(kept.rdispls),                                     \
      displs(kept.sdispls.present() ? kept.sdispls : kept.rdispls);                           \
  [[maybe_unused]] const MPI_Datatype* const sendtypes = kept.sendtypes;                      \
  [[maybe_unused]] const MPI_Datatype* const recvtypes = kept.recvtypes;

// Persistent forms also hand over the nonblocking entry point, captured by value: a persistent
// request the library owns starts it (through the router) at every MPI_Start, long after this
// returns, with the request's copies of the arrays in place of the caller's.
#define MCRP_PERSISTENT_WRAPPER(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                     \
  extern "C" int NAME(MCRP_UNPAREN PARAMS, MPI_Info info, MPI_Request* request) {                             \
    auto base = MCRP_BASE_LAMBDA(P##NAME, ARGS, , info, request);                                             \
    mcrp::OwnedBaseCall nonblocking = [=](MCRP_BASE_PARAMETERS, const mcrp::BaseArrays& kept) {               \
      MCRP_KEPT_ARRAYS(kept)                                                                                  \
      return P##NONBLOCKING_NAME(MCRP_UNPAREN ARGS, request);                                                 \
    };                                                                                                        \
    return mcrp::run_persistent_init(mcrp::describe::kind ARGS, mcrp::BaseCall(base), std::move(nonblocking), \
                                     request);                                                                 \
  }

// The three forms of one collective, with the suffix of one count form ("" or _c).
#define MCRP_ALL_FORMS(Name, NonblockingName, SUFFIX, kind, PARAMS, ARGS)                               \
  MCRP_BLOCKING_WRAPPER(MPI_##Name##SUFFIX, MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS)         \
  MCRP_NONBLOCKING_WRAPPER(MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS)                          \
  MCRP_PERSISTENT_WRAPPER(MPI_##Name##_init##SUFFIX, MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS)
