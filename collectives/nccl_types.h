// Which MPI reductions NCCL computes exactly. Decided only from the datatype and op handles, which
// MPI requires to be identical on every rank of a reduction, so every rank agrees. What is not here
// is staged, and the base MPI computes it (or reports it erroneous, as MPI_BYTE with MPI_SUM).
#pragma once
#include <mpi.h>
#include <nccl.h>

namespace mcrp {

// The NCCL type and op giving bit-for-bit the base MPI's result for (type, op): every integer type of
// 8, 32 or 64 bits (MPI_CHAR by the platform's char signedness, MPI_AINT, MPI_OFFSET, MPI_COUNT),
// float, double and MPIX_C_FLOAT16 with MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN; and the C and C++ bool
// types with MPI_LAND and MPI_LOR (as min and max of 0 and 1). False otherwise.
bool to_nccl_reduction(MPI_Datatype type, MPI_Op op, ncclDataType_t* nccl_type, ncclRedOp_t* nccl_op);

// The NCCL type that carries `type`'s values for an arithmetic op; false when NCCL has none.
bool to_nccl_type(MPI_Datatype type, ncclDataType_t* out);

}  // namespace mcrp
