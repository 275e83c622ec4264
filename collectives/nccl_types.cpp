#include "collectives/nccl_types.h"


namespace mcrp {
namespace {

static_assert(sizeof(long) == 8 && sizeof(int) == 4, "LP64 assumed by the type table");

struct TypeEntry {
  MPI_Datatype mpi;
  ncclDataType_t nccl;
};

// Predefined handles are compile-time constants in the MPICH ABI, so this table is fixed.
const TypeEntry kTypes[] = {
    {MPI_INT8_T, ncclInt8},         {MPI_SIGNED_CHAR, ncclInt8},
    {MPI_UINT8_T, ncclUint8},       {MPI_UNSIGNED_CHAR, ncclUint8},
    {MPI_INT32_T, ncclInt32},       {MPI_INT, ncclInt32},
    {MPI_UINT32_T, ncclUint32},     {MPI_UNSIGNED, ncclUint32},
    {MPI_INT64_T, ncclInt64},       {MPI_LONG, ncclInt64},
    {MPI_LONG_LONG, ncclInt64},     {MPI_LONG_LONG_INT, ncclInt64},
    {MPI_UINT64_T, ncclUint64},     {MPI_UNSIGNED_LONG, ncclUint64},
    {MPI_UNSIGNED_LONG_LONG, ncclUint64},
    {MPI_FLOAT, ncclFloat32},       {MPI_DOUBLE, ncclFloat64},
    {MPIX_C_FLOAT16, ncclFloat16},
};

}  // namespace

bool to_nccl_type(MPI_Datatype type, ncclDataType_t* out) {
  for (const TypeEntry& entry : kTypes) {
    if (entry.mpi == type) {
      *out = entry.nccl;
      return true;
    }
  }
  return false;
}

bool to_nccl_op(MPI_Op op, ncclRedOp_t* out) {
  if (op == MPI_SUM) {
    *out = ncclSum;
  } else if (op == MPI_PROD) {
    *out = ncclProd;
  } else if (op == MPI_MAX) {
    *out = ncclMax;
  } else if (op == MPI_MIN) {
    *out = ncclMin;
  } else {
    return false;
  }
  return true;
}

}  // namespace mcrp
