// The single entry from pmpi/ for every point-to-point call that carries a buffer. With no GPU
// present it costs one branch before the base MPI call; host buffers go to the base MPI untouched,
// with the caller's own request and status. Device buffers take the staged path (p2p/staged.h).
// Matching -- envelopes, wildcards, non-overtaking, probes -- is always the base MPI's.
#pragma once
#include <mpi.h>

#include "p2p/call.h"
#include "runtime/requests.h"

namespace mcrp {

// Blocking and nonblocking forms. `status` is the blocking receive's (MPI_STATUS_IGNORE otherwise);
// in nonblocking mode *request receives the base MPI's request (host buffers) or one the library
// completes (device buffers).
int run_p2p(const P2PCall& call, const P2PBaseCall& base, Mode mode, MPI_Request* request, MPI_Status* status);

// The blocking form, given its nonblocking twin too (as run_blocking_collective, collectives/dispatch.h).
int run_blocking_p2p(const P2PCall& call, const P2PBaseCall& base, const P2PBaseCall& nonblocking, MPI_Status* status);

// MPI_Probe, MPI_Iprobe (flag set), MPI_Mprobe, MPI_Improbe (message set): the base MPI's, except
// on communicators asserted device-only (p2p/assertion.h), where the library's headers are what
// arrives and the status must report the payload's size. `base` is the PMPI_ call.
int run_probe(const char* entry, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
              MPI_Status* status, int (*base)(void*), void* context);

// Persistent forms: `init` is PMPI_<Name>_init. Host buffers get the base MPI's persistent request;
// device buffers a library-owned one (runtime/persistent.h) that runs the call through the router
// as a nonblocking call, with `nonblocking`, at every MPI_Start.
int run_p2p_persistent_init(const P2PCall& call, const P2PBaseCall& init, OwnedP2PBaseCall nonblocking,
                            MPI_Request* request);

}  // namespace mcrp
