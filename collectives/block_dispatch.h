// The entry from pmpi/ for MPI_Alltoallw and the neighborhood collectives (pmpi/block_collectives.def):
// overloads of the routed collectives' three entries (dispatch.h) on
// BlockCall, so one set of wrapper macros serves both lists.
//
// NCCL has no operation that matches these, so there is one device path: staging through pinned
// host memory (staged_sides.h), decided by each rank alone from its own buffers. Every rank calls
// the same base-MPI collective either way, so ranks that differ in memory kinds still match, and
// no agreement is needed (rule 1 holds by construction). Host buffers go to the base MPI as they
// are; in a process without CUDA (runtime/host_only.h) before anything else is looked at, except
// for the arguments MPICH 4.0.2 crashes on instead of reporting (MPI_IN_PLACE in a neighborhood
// collective, NULL arrays), which are checked first everywhere. Under MCRPMPI_STATS or
// MCRPMPI_PROFILE every call is described, host ones too, and counted in its own rows; under
// MCRPMPI_VERIFY its memory is checked and the ranks agree on every check's outcome.
#pragma once
#include <mpi.h>

#include "collectives/base_call.h"
#include "collectives/block_call.h"
#include "collectives/host_direct.h"
#include "runtime/requests.h"

namespace mcrp {

// The block collectives have no direct path (collectives/host_direct.h): the router checks their
// MPI_IN_PLACE and arrays on every call, which MPICH 4.0.2 crashes on. So their wrappers never
// look anything up, and the routing below takes their (empty) verdict only to share the wrappers.
inline HostDirect host_direct(const BlockCall&, Mode) { return {}; }

int run_collective(const BlockCall& call, const BaseCall& base, Mode mode = Mode::blocking,
                   MPI_Request* request = nullptr, const HostDirect& wrapper = {});

// Under MCRPMPI_POLLING_COLLECTIVES (or a device-only point-to-point setting, runtime/config.h) the
// blocking form runs as the nonblocking one plus a polling library wait, as the routed ones do.
int run_blocking_collective(const BlockCall& call, const BaseCall& base, const BaseCall& nonblocking,
                            const HostDirect& wrapper = {});

// Persistent forms. In a process with CUDA every rank makes the library's persistent request, which
// runs the nonblocking form through run_collective at each MPI_Start (memory kinds may differ per
// start and per rank, and a base persistent request would not match a nonblocking collective on
// another rank); a host-only process gets the base MPI's own persistent request.
int run_persistent_init(const BlockCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request);

}  // namespace mcrp
