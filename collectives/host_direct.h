// Whether a collective on host buffers may go from its wrapper straight to the base MPI's entry
// point with the caller's own arguments: the router, the type-erased base call and their stack
// frames cost about 150 instructions a host call, where this test costs a handful.
//
// Inline, and given the wrapper's own CollCall, so that in each entry point the compiler folds
// away what its collective can never need (the kind is a constant there). Whatever the router
// would do to a host call must make this false: the library's checks of what MPICH 4.0.2 does not
// check (needs_host_checks, also used by the router), the base MPI's defects call_base avoids
// (base_call_may_adjust), and anything watching host calls (runtime/host_only.h).
#pragma once
#include <mpi.h>

#include <cstdint>

#include "collectives/base_call.h"
#include "collectives/call.h"
#include "device/cuda_runtime.h"
#include "runtime/buffer.h"
#include "runtime/host_only.h"
#include "runtime/mpich_handles.h"
#include "runtime/requests.h"

namespace mcrp {

// The counts arrays of a vector form, when the host checks need them: a NULL one (MPICH 4.0.2
// dereferences it; significant or not is for the layout to say), large-count ones, or any with a
// derived datatype (their counts may overflow; int counts of predefined datatypes, at most 32
// bytes each, cannot, and MPICH checks their signs itself).
[[gnu::always_inline]] inline bool counts_arrays_to_check(const CollCall& call) {
  bool arrays_present = true, wide = false;
  switch (call.kind) {
    case CollKind::allgatherv:
    case CollKind::gatherv:
      arrays_present = call.recvcounts.present() && call.rdispls.present();
      wide = call.recvcounts.wide();
      break;
    case CollKind::scatterv:
      arrays_present = call.sendcounts.present() && call.sdispls.present();
      wide = call.sendcounts.wide();
      break;
    case CollKind::reduce_scatter:
      arrays_present = call.recvcounts.present();
      wide = call.recvcounts.wide();
      break;
    case CollKind::alltoallv:
      arrays_present =
          call.sendcounts.present() && call.sdispls.present() && call.recvcounts.present() && call.rdispls.present();
      wide = call.sendcounts.wide();
      break;
    default: return false;
  }
  return !arrays_present || wide || !is_builtin_handle(call.sendtype) || !is_builtin_handle(call.recvtype);
}

// MPI_IN_PLACE as the send buffer of an unrooted collective on an intracommunicator is the common,
// allowed use (one query); any other MPI_IN_PLACE needs the layout to tell. MPI_Allreduce needs no
// query: on an intercommunicator the base MPI refuses its MPI_IN_PLACE itself (MPI_ERR_BUFFER,
// every form, in MPICH 4.0.2 and both wheels of tests/abi), where it accepts the other
// collectives' (docs/base-mpi-defects.md), and an in-place allreduce is the commonest of them.
[[gnu::always_inline]] inline bool in_place_to_check(const CollCall& call) {
  if (call.recvbuf == MPI_IN_PLACE) return true;
  if (call.sendbuf != MPI_IN_PLACE || call.kind == CollKind::allreduce) return false;
  int inter = 0;
  return is_rooted(call.kind) || PMPI_Comm_test_inter(call.comm, &inter) != MPI_SUCCESS || inter != 0;
}

// A host call straight to the base MPI, unless it may hold what MPICH 4.0.2 does not check and
// crashes on (the router's validate, collectives/dispatch.cpp): a negative or large scalar count (one unsigned compare
// each), MPI_IN_PLACE other than the common use, a vector form's NULL or large-count arrays. Then the layout decides
// which of those are significant at all. MPI_DATATYPE_NULL in a reduction: MPICH 5.0.2 aborts on it (one compare,
// reductions only).
[[gnu::always_inline]] inline bool needs_host_checks(const CollCall& call) {
  return static_cast<std::uint64_t>(call.sendcount) >= static_cast<std::uint64_t>(kCheckedCount) ||
         static_cast<std::uint64_t>(call.recvcount) >= static_cast<std::uint64_t>(kCheckedCount) ||
         (is_reduction(call.kind) && call.recvtype == MPI_DATATYPE_NULL) || in_place_to_check(call) ||
         counts_arrays_to_check(call);
}

// A buffer argument whose datatype is derived may hold data away from the pointer itself (MPI_BOTTOM
// with absolute addresses), so locating the argument does not tell a host call; the layout must.
[[gnu::always_inline]] inline bool data_may_lie_elsewhere(const CollCall& call) {
  auto derived = [](MPI_Datatype type) { return is_datatype_handle(type) && !is_builtin_handle(type); };
  return (call.sendbuf != MPI_IN_PLACE && derived(call.sendtype)) || derived(call.recvtype);
}

// The two buffer arguments as the caller passed them, located once per call (MPI_IN_PLACE is no
// memory). Every significant side's base is one of them (collectives/layout.h), so when both are
// host memory and their datatypes predefined the call is a host call whatever the significance,
// and needs no layout to say so (a derived datatype may reach other memory: the router's classify).
// Locating an insignificant argument reads nothing through it: detection never dereferences.
struct ArgumentMemory {
  device::PointerInfo send, recv;

  bool any_device() const {
    return send.kind == device::MemoryKind::device || recv.kind == device::MemoryKind::device;
  }
  device::PointerInfo of(const void* base, const CollCall& call) const {
    if (base == call.sendbuf) return send;
    if (base == call.recvbuf) return recv;
    return device::locate(base);
  }
};
// Out of line (collectives/dispatch.cpp): one memory-kind lookup per buffer.
ArgumentMemory locate_arguments(const void* sendbuf, const void* recvbuf);

// What a wrapper learnt before routing a call: whether it goes straight to the base MPI, and the
// memory of its buffer arguments when it looked them up, which the router then takes instead of
// looking again (a driver query each on a GPU, unless cached; pmpi/collective_wrapper_macros.h).
struct HostDirect {
  bool direct = false;
  bool located = false;
  ArgumentMemory memory;
};

// A call the router would pass to the base MPI as it is: a host-only process (no CUDA, nothing
// watching host calls; runtime/host_only.h), or with CUDA, nothing watching host calls and both
// buffer arguments host memory. A blocking call also must not be one that
// MCRPMPI_POLLING_COLLECTIVES runs as a nonblocking call and a polling wait.
[[gnu::always_inline]] inline HostDirect host_direct(const CollCall& call, Mode mode) {
  HostDirect verdict;
  const bool blocking = mode == Mode::blocking;
  if (needs_host_checks(call) || base_call_may_adjust(call, call.sendbuf, blocking)) return verdict;
  if (blocking ? host_only_blocking_collectives() : host_only_process()) {
    verdict.direct = true;
    return verdict;
  }
  if (!(blocking ? blocking_collectives_unwatched() : host_calls_unwatched()) || data_may_lie_elsewhere(call)) {
    return verdict;
  }
  verdict.memory = locate_arguments(call.sendbuf, call.recvbuf);
  verdict.located = true;
  verdict.direct = !verdict.memory.any_device();
  return verdict;
}

}  // namespace mcrp
