// Which MPI datatypes and ops NCCL can reduce. Decided only from the datatype and op handles, which
// MPI requires to be identical on every rank of a reduction, so every rank agrees.
#pragma once
#include <mpi.h>
#include <nccl.h>

namespace mcrp {

bool to_nccl_type(MPI_Datatype type, ncclDataType_t* out);
bool to_nccl_op(MPI_Op op, ncclRedOp_t* out);

}  // namespace mcrp
