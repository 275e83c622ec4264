// The single entry from pmpi/ for every collective the wrapper's inline test (host_direct.h) did
// not send straight to the base MPI: classify the buffers, choose the path, run it, report errors
// through the communicator's handler, record stats. A host-buffer nonblocking or persistent call
// gets the base MPI's own request, so Wait/Test on it never touch this library (persistent gather,
// allgather and scatter excepted: run_persistent_init).
#pragma once
#include <mpi.h>

#include <functional>

#include "collectives/base_call.h"
#include "collectives/call.h"
#include "collectives/host_direct.h"
#include "runtime/requests.h"

namespace mcrp {

// Blocking and nonblocking forms. In nonblocking mode *request receives the base MPI's request
// (host buffers) or a generalized request the library completes (device buffers; see requests.h).
// `wrapper`: what the entry point's wrapper learnt first (collectives/host_direct.h).
int run_collective(const CollCall& call, const BaseCall& base, Mode mode = Mode::blocking,
                   MPI_Request* request = nullptr, const HostDirect& wrapper = {});

// The blocking form, given its nonblocking twin too: under MCRPMPI_POLLING_COLLECTIVES=1 (or
// MCRPMPI_P2P_DEVICE_ONLY=1, runtime/config.h) the call runs as the nonblocking one and a polling library wait, so it never blocks inside the
// base MPI while a peer waits for this rank's point-to-point protocol. Decided alike on every rank.
int run_blocking_collective(const CollCall& call, const BaseCall& base, const BaseCall& nonblocking,
                            const HostDirect& wrapper = {});

// Persistent forms: `init` is PMPI_<Coll>_init. Host buffers get the base MPI's persistent request.
// Device buffers get a library-owned persistent request (requests_persistent.h) that runs the call
// through the router as a nonblocking call, with `nonblocking`, at every MPI_Start.
int run_persistent_init(const CollCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request);

}  // namespace mcrp
