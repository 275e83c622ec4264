// The nonblocking bcast on an intercommunicator, run as the base MPI's MPI_Ialltoallv_c.
//
// MPICH 4.0.2, the `mpich` 5.0.2 wheel and Intel MPI 2021.18 all deliver nothing from MPI_Ibcast on
// an intercommunicator whose root is not rank 0 of its group (the receivers keep their old
// contents), and their persistent bcast there delivers nothing (4.0.2) or hangs (the wheels);
// blocking MPI_Bcast is right. Their MPI_Ialltoallv_c is right on intercommunicators for every
// root, so the library sends the root's buffer with it: the root sends `count` elements to every
// remote rank, each remote rank receives them from the root, the root's other ranks move nothing.
// The MPI_PROC_NULL ranks of the root's group cannot tell whether the root is rank 0 of their
// group, so every nonblocking bcast on an intercommunicator takes this path, on every rank (rule
// 1: the decision reads only the collective and the communicator). Persistent ones follow, since
// the library starts their nonblocking form (collectives/dispatch.cpp).
#pragma once
#include <mpi.h>

#include "collectives/call.h"

namespace mcrp {

// Whether `call` is a bcast that call_base must run as start_intercomm_bcast: nonblocking, on an
// intercommunicator (a root of MPI_ROOT or MPI_PROC_NULL names one without a query; otherwise one
// MPI_Comm_test_inter, whose failure leaves an invalid communicator to the base MPI's own call).
[[gnu::always_inline]] inline bool intercomm_nonblocking_bcast(const CollCall& call, bool blocking) {
  if (call.kind != CollKind::bcast || blocking) return false;
  if (call.root == MPI_ROOT || call.root == MPI_PROC_NULL) return true;
  int inter = 0;
  return PMPI_Comm_test_inter(call.comm, &inter) == MPI_SUCCESS && inter != 0;
}

// Starts the bcast of `call` on `buffer` (the user's, or the staged path's host image) in
// `datatype`, writing a request that completes with it, and sets *rc to the MPI code (an error is
// raised through the communicator's handler). Returns false, doing nothing, for arguments that are
// the base MPI's to report (an intracommunicator, a root out of range): its own MPI_Ibcast then.
bool start_intercomm_bcast(const CollCall& call, void* buffer, MPI_Datatype datatype, MPI_Request* request,
                           int* rc);

}  // namespace mcrp
