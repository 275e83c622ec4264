// Communicator constructors (MPI_Comm_dup, MPI_Comm_split, the topology constructors, ...) are
// blocking collectives of the base MPI's that the library cannot poll: MPI 4.0 has a nonblocking
// form of MPI_Comm_dup only. A rank blocked inside one does not advance its library's nonblocking
// device operations, and a peer may wait for exactly that before it comes to the constructor: rank
// 0 starts an MPI_Iallreduce on a fresh duplicate and calls MPI_Comm_dup, while rank 1 waits for
// that allreduce, whose NCCL setup needs rank 0 to take the unique id its MPI_Ibcast brought (and
// so enter ncclCommInitRank). Both wait for ever. test_owed_progress's dup and split cases hung so
// until 2026-11-30; test_coll_random --fresh-comms, which makes a duplicate and two halves every
// round, met it twice in 133 runs by hand (README "Reliability").
//
// Under MCRPMPI_POLLING_COLLECTIVES=1 (set on every rank, so every member decides alike: rule 1)
// the members first meet in an MPI_Ibarrier on the communicator the constructor is collective over,
// waited by polling, which advances the library. Once a member's barrier completes, every member
// has entered the constructor, which then needs nothing more of any rank's library. Where the
// helper thread runs (runtime/progress_thread.h) it advances that work instead, and without either
// setting a blocking collective of the base MPI stays the documented limit.
#pragma once
#include <mpi.h>

namespace mcrp {

// Before a constructor collective over `comm` (its parent; the intercommunicator for
// MPI_Intercomm_merge). MPI_SUCCESS at once without the setting or for a handle that names no
// communicator (the constructor itself then reports it); else the barrier's result.
int meet_before_constructor(MPI_Comm comm);

}  // namespace mcrp
