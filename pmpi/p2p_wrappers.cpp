// Every point-to-point entry point that carries a buffer, generated from pmpi/p2p.def. Each line
// expands to up to six forms: blocking, nonblocking (MPI_I<name>) and persistent (MPI_<Name>_init),
// each as the int form and the large-count (_c) form. All call one implementation (mcrp::run_p2p
// on an mcrp::P2PCall); the forms differ only in their trailing parameters and the PMPI function.
#include <mpi.h>

#include <utility>

#include "p2p/call.h"
#include "p2p/dispatch.h"

#define MCRP_UNPAREN(...) __VA_ARGS__

// The base MPI's entry point as a lambda whose sendbuf/recvbuf/request/status parameters shadow the
// user's, so the staged path can substitute host images, its own status and its own inner request.
// The variadic tail is what the form adds after ARGS: `, status` or `, request`.
#define MCRP_P2P_BASE_PARAMETERS                                                                  \
  [[maybe_unused]] const void* sendbuf, [[maybe_unused]] void* recvbuf,                           \
      [[maybe_unused]] MPI_Request* request, [[maybe_unused]] MPI_Status* status
#define MCRP_P2P_BASE_LAMBDA(PNAME, ARGS, ...) \
  [&](MCRP_P2P_BASE_PARAMETERS) { return PNAME(MCRP_UNPAREN ARGS __VA_ARGS__); }

// The call as the router sees it, named by the entry point actually called.
#define MCRP_P2P_CALL(NAME, kind, ARGS)                \
  [&] {                                                \
    mcrp::P2PCall call = mcrp::p2p_describe::kind ARGS; \
    call.entry = #NAME;                                \
    return call;                                       \
  }()

// Blocking and nonblocking forms first ask mcrp::host_direct (p2p/dispatch.h) whether the call may
// go straight to the base MPI; if not, routed_<NAME> hands it to the router with what host_direct
// found. The direct path is a tail call and pays no stack frame for the routed one. Blocking forms
// (receiving ones end with the status) also hand over the nonblocking entry point, for when they
// must not block inside the base MPI (mcrp::run_blocking_p2p).
#define MCRP_P2P_DIRECT_OR_ROUTED(NAME, kind, ARGS, blocking, SIGNATURE, CALL_ARGS)      \
  extern "C" int NAME SIGNATURE {                                                       \
    const mcrp::P2PVerdict verdict = mcrp::host_direct(mcrp::p2p_describe::kind ARGS, blocking); \
    if (verdict == mcrp::P2PVerdict::direct) return P##NAME CALL_ARGS;                  \
    return routed_##NAME(MCRP_UNPAREN CALL_ARGS, verdict);                              \
  }

#define MCRP_P2P_BLOCKING_0(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                   \
  [[gnu::noinline]] static int routed_##NAME(MCRP_UNPAREN PARAMS, mcrp::P2PVerdict verdict) {           \
    auto base = MCRP_P2P_BASE_LAMBDA(P##NAME, ARGS, );                                                  \
    auto nonblocking = MCRP_P2P_BASE_LAMBDA(P##NONBLOCKING_NAME, ARGS, , request);                      \
    return mcrp::run_blocking_p2p(MCRP_P2P_CALL(NAME, kind, ARGS), mcrp::P2PBaseCall(base),             \
                                  mcrp::P2PBaseCall(nonblocking), MPI_STATUS_IGNORE, verdict);          \
  }                                                                                                     \
  MCRP_P2P_DIRECT_OR_ROUTED(NAME, kind, ARGS, true, PARAMS, ARGS)
#define MCRP_P2P_BLOCKING_1(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                   \
  [[gnu::noinline]] static int routed_##NAME(MCRP_UNPAREN PARAMS, MPI_Status* status,                   \
                                             mcrp::P2PVerdict verdict) {                                \
    auto base = MCRP_P2P_BASE_LAMBDA(P##NAME, ARGS, , status);                                          \
    auto nonblocking = MCRP_P2P_BASE_LAMBDA(P##NONBLOCKING_NAME, ARGS, , request);                      \
    return mcrp::run_blocking_p2p(MCRP_P2P_CALL(NAME, kind, ARGS), mcrp::P2PBaseCall(base),             \
                                  mcrp::P2PBaseCall(nonblocking), status, verdict);                     \
  }                                                                                                     \
  MCRP_P2P_DIRECT_OR_ROUTED(NAME, kind, ARGS, true, (MCRP_UNPAREN PARAMS, MPI_Status* status),         \
                            (MCRP_UNPAREN ARGS, status))

#define MCRP_P2P_NONBLOCKING(NAME, kind, PARAMS, ARGS)                                                    \
  [[gnu::noinline]] static int routed_##NAME(MCRP_UNPAREN PARAMS, MPI_Request* request,                 \
                                             mcrp::P2PVerdict verdict) {                                \
    auto base = MCRP_P2P_BASE_LAMBDA(P##NAME, ARGS, , request);                                         \
    return mcrp::run_p2p(MCRP_P2P_CALL(NAME, kind, ARGS), mcrp::P2PBaseCall(base), mcrp::Mode::nonblocking, \
                         request, MPI_STATUS_IGNORE, verdict);                                          \
  }                                                                                                     \
  MCRP_P2P_DIRECT_OR_ROUTED(NAME, kind, ARGS, false, (MCRP_UNPAREN PARAMS, MPI_Request* request),      \
                            (MCRP_UNPAREN ARGS, request))

// Persistent forms also hand over the nonblocking entry point, captured by value: a device-buffer
// persistent request starts it (through the router) at every MPI_Start, long after this returns.
#define MCRP_P2P_PERSISTENT_1(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)                                    \
  extern "C" int NAME(MCRP_UNPAREN PARAMS, MPI_Request* request) {                                          \
    auto init = MCRP_P2P_BASE_LAMBDA(P##NAME, ARGS, , request);                                             \
    mcrp::OwnedP2PBaseCall nonblocking = [=](MCRP_P2P_BASE_PARAMETERS) {                                    \
      return P##NONBLOCKING_NAME(MCRP_UNPAREN ARGS, request);                                               \
    };                                                                                                      \
    return mcrp::run_p2p_persistent_init(MCRP_P2P_CALL(NAME, kind, ARGS), mcrp::P2PBaseCall(init),          \
                                         std::move(nonblocking), request);                                  \
  }
#define MCRP_P2P_PERSISTENT_0(NAME, NONBLOCKING_NAME, kind, PARAMS, ARGS)

#define MCRP_P2P_FORMS(SUFFIX, Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS)          \
  MCRP_P2P_BLOCKING_##receives(MPI_##Name##SUFFIX, MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS) \
  MCRP_P2P_NONBLOCKING(MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS)                              \
  MCRP_P2P_PERSISTENT_##persistent(MPI_##Name##_init##SUFFIX, MPI_##NonblockingName##SUFFIX, kind, PARAMS, ARGS)

// int forms
#define MCRP_COUNT int
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) \
  MCRP_P2P_FORMS(, Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS)
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
#undef MCRP_COUNT

// large-count forms
#define MCRP_COUNT MPI_Count
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) \
  MCRP_P2P_FORMS(_c, Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS)
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
#undef MCRP_COUNT
