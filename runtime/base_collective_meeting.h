// Communicator constructors (MPI_Comm_dup, MPI_Comm_split, the topology constructors, ...) and
// MPI_Comm_disconnect are blocking collectives of the base MPI's that the library cannot poll: MPI
// 4.0 has a nonblocking form of MPI_Comm_dup only. A rank blocked inside one does not advance its
// library's nonblocking device operations, and a peer may wait for exactly that before it comes to
// the same call: rank 0 starts an MPI_Iallreduce on a fresh duplicate and calls MPI_Comm_dup, while
// rank 1 waits for that allreduce, whose NCCL setup needs rank 0 to take the unique id its
// MPI_Ibcast brought (and so enter ncclCommInitRank). Both wait for ever. test_owed_progress's dup
// and split cases hung so until the night of 2026-11-29, and so did test_coll_random --fresh-comms
// with a constructor at each fence. (MPICH 4.0.2's MPI_Comm_disconnect of an intracommunicator does
// not wait for its peers, so its case passes either way; MPI lets a disconnect synchronize.)
//
// Under MCRPMPI_POLLING_COLLECTIVES=1 (set on every rank, so every member decides alike: rule 1)
// the members first meet in an MPI_Ibarrier on the communicator the call is collective over, waited
// by polling, which advances the library. Once a member's barrier completes, every member has
// entered the call, which then needs nothing more of any rank's library. Where the helper thread
// runs (runtime/progress_thread.h) it advances that work instead, and without either setting a
// blocking collective of the base MPI stays the documented limit.
#pragma once
#include <mpi.h>

#include "runtime/raised_errors.h"

namespace mcrp {

// Before a blocking collective of the base MPI's over `comm` (a constructor's parent; the
// intercommunicator for MPI_Intercomm_merge). MPI_SUCCESS at once without the setting or for a
// handle that names no communicator (the call itself then reports it); else the barrier's result.
int meet_before_base_collective(MPI_Comm comm);

// The base MPI's call `base_call` (returning its MPI code) once the members met; the meeting's
// error instead if it failed.
template <class BaseCall>
int after_meeting(MPI_Comm comm, BaseCall base_call) {
  return base_result([&] {
    const int rc = meet_before_base_collective(comm);
    return rc == MPI_SUCCESS ? base_call() : rc;
  });
}

}  // namespace mcrp
