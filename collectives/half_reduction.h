// fp16 reductions on the base MPI. Debian's MPICH 4.0.2 aborts on any reduction of MPIX_C_FLOAT16
// (typerep_yaksa_pack.c: actual_pack_bytes == data_sz), whether the buffers are the user's host
// memory or the staged copies of device memory. Horovod's answer works: a contiguous 2-byte type
// and a user op. The library applies it itself wherever an fp16 reduction reaches the base MPI.
// The choice depends only on the datatype and op, which all ranks of a reduction share.
#pragma once
#include <mpi.h>

#include "collectives/kind.h"

namespace mcrp {

bool half_substitute_reduction(CollKind kind, MPI_Op op, MPI_Datatype* type, MPI_Op* replacement);

// True when a reduction of `kind` on `datatype` with `op` must not reach the base MPI as is; then
// *type and *replacement are what to pass instead (created on first use, commutative ops). Inline:
// every host collective asks, and only MPIX_C_FLOAT16 gets past the first comparison.
inline bool half_substitute(CollKind kind, MPI_Datatype datatype, MPI_Op op, MPI_Datatype* type, MPI_Op* replacement) {
  return datatype == MPIX_C_FLOAT16 && half_substitute_reduction(kind, op, type, replacement);
}

// Releases the substitute type and ops; called before PMPI_Finalize.
void release_half_reduction();

}  // namespace mcrp
