// MCRPMPI_VERIFY: before a collective, its ranks agree with one small allreduce on what they must
// agree on, so that a program whose ranks disagree gets an MPI error or one consistent fallback on
// every rank instead of a hang (some ranks in NCCL, others in the base MPI; NCCL calls of different
// sizes; different roots):
//   - the outcome of the library's own argument checks: if any rank's failed, every rank fails the
//     call with the largest error class found;
//   - host versus device buffers: on disagreement every rank uses the base MPI (the fallback);
//   - the root (intracommunicators), the predefined reduction op and reduction datatype, and the
//     message size in bytes every rank computes alike (collectives/layout.h, agreed_bytes: counts
//     times datatype sizes, so differing counts or datatype signatures show there): on disagreement
//     every rank fails the call, with MPI_ERR_ROOT, MPI_ERR_OP, MPI_ERR_TYPE or MPI_ERR_COUNT.
// Vector forms without one agreed size (alltoallv, gatherv, scatterv) and intercommunicators, whose
// groups pass different roots and sizes by design, are agreed on memory kinds and checks only.
#pragma once
#include <mpi.h>

#include "collectives/paths.h"
#include "device/status.h"

namespace mcrp {

struct Agreement {
  bool memory_disagrees = false;
  Status outcome;  // this rank's own check failure, else another rank's or a disagreement
};

// Collective over the call's communicator. `local` is this rank's outcome of the checks (its types
// in `p` are prepared when it is ok).
Agreement agree(const Prepared& p, bool device_memory, const Status& local);

// The check outcomes alone, for the collectives whose ranks need to agree on nothing else
// (MPI_Alltoallw and the neighborhood collectives: every rank calls the base MPI's collective
// whatever its memory kinds). Collective over `comm`: one allreduce of one integer.
Status agree_on_checks(MPI_Comm comm, const Status& local);

}  // namespace mcrp
