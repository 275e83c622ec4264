// The single entry from pmpi/ for every point-to-point call that carries a buffer. With no GPU
// present it costs one branch before the base MPI call; host buffers go to the base MPI untouched,
// with the caller's own request and status. Device buffers take the staged path (p2p/staged.h).
// Matching -- envelopes, wildcards, non-overtaking, probes -- is always the base MPI's.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "p2p/call.h"
#include "runtime/buffer.h"
#include "runtime/host_only.h"
#include "runtime/requests.h"

namespace mcrp {

// MPICH 4.0.2 does not check count * extent for overflow (it moves nothing and succeeds, or
// crashes), so the library does, like the base MPI's own argument checks whatever the peer (even
// MPI_PROC_NULL): only counts from kCheckedCount up, which need datatype queries. An invalid
// datatype stays the base MPI's to report.
[[gnu::always_inline]] inline bool has_large_count(const P2PCall& call) {
  return (call.sends() && call.sendcount >= kCheckedCount) || (call.receives() && call.recvcount >= kCheckedCount);
}

// What a wrapper learnt before routing a call (host_direct), handed to the router so that it does
// not look the buffers up again (a driver query each on a GPU, unless cached).
enum class P2PVerdict : std::uint8_t {
  unknown,  // the router decides
  direct,   // the base MPI as it is
  routed,   // not the base MPI as it is (watched, an asserted communicator, a side in device memory)
};

// For a call whose counts the library does not check, in a process that is not host-only: direct
// when nothing watches host calls (MCRPMPI_PROFILE counts them, MCRPMPI_VERIFY checks their
// memory), no communicator is asserted device-only (it refuses host buffers, and a library message
// is received only by its protocol) and neither side may be device memory (a side the call does
// not have passes NULL); for a blocking call, unknown while background work waits for progress
// (run_blocking_p2p decides). Two memory-kind lookups (device/host_regions.h).
P2PVerdict host_sides(const void* sendbuf, MPI_Datatype sendtype, const void* recvbuf, MPI_Datatype recvtype,
                      bool blocking);
// The same for the sides `call` has. Inline: each entry point folds the sides it does not have.
[[gnu::always_inline]] inline P2PVerdict host_sides(const P2PCall& call, bool blocking) {
  return host_sides(call.sends() ? call.sendbuf : nullptr, call.sends() ? call.sendtype : MPI_BYTE,
                    call.receives() ? call.recvbuf : nullptr, call.receives() ? call.recvtype : MPI_BYTE, blocking);
}

// Whether a blocking or nonblocking call may go from its wrapper straight to the base MPI with the
// caller's own arguments: in a host-only process (runtime/host_only.h) any call without a count
// the library checks, else as host_sides says. Inline: the router, the type-erased base call and
// their frames cost about 100 instructions a host call.
[[gnu::always_inline]] inline P2PVerdict host_direct(const P2PCall& call, bool blocking) {
  if (has_large_count(call)) return P2PVerdict::unknown;
  if (host_only_process()) return P2PVerdict::direct;
  return host_sides(call, blocking);
}

// Blocking and nonblocking forms. `status` is the blocking receive's (MPI_STATUS_IGNORE otherwise);
// in nonblocking mode *request receives the base MPI's request (host buffers) or one the library
// completes (device buffers).
int run_p2p(const P2PCall& call, const P2PBaseCall& base, Mode mode, MPI_Request* request, MPI_Status* status,
            P2PVerdict wrapper = P2PVerdict::unknown);

// The blocking form, given its nonblocking twin too (as run_blocking_collective, collectives/dispatch.h).
int run_blocking_p2p(const P2PCall& call, const P2PBaseCall& base, const P2PBaseCall& nonblocking, MPI_Status* status,
                     P2PVerdict wrapper = P2PVerdict::unknown);

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
