#include "collectives/nccl_types.h"

#include <climits>
#include <type_traits>

namespace mcrp {
namespace {

static_assert(sizeof(long) == 8 && sizeof(int) == 4, "LP64 assumed by the type table");
static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8,
              "64-bit address, offset and count types assumed by the type table");
static_assert(sizeof(bool) == 1, "one-byte bool assumed by the logical table");

struct TypeEntry {
  MPI_Datatype mpi;
  ncclDataType_t nccl;
};

constexpr ncclDataType_t kChar = std::is_signed<char>::value ? ncclInt8 : ncclUint8;

// Predefined handles are compile-time constants in the MPICH ABI, so this table is fixed. NCCL has
// no 16-bit integers, no complex types and no long double: those are staged.
const TypeEntry kArithmetic[] = {
    {MPI_CHAR, kChar},
    {MPI_INT8_T, ncclInt8},         {MPI_SIGNED_CHAR, ncclInt8},
    {MPI_UINT8_T, ncclUint8},       {MPI_UNSIGNED_CHAR, ncclUint8},
    {MPI_INT32_T, ncclInt32},       {MPI_INT, ncclInt32},
    {MPI_UINT32_T, ncclUint32},     {MPI_UNSIGNED, ncclUint32},
    {MPI_INT64_T, ncclInt64},       {MPI_LONG, ncclInt64},
    {MPI_LONG_LONG, ncclInt64},     {MPI_LONG_LONG_INT, ncclInt64},
    {MPI_AINT, ncclInt64},          {MPI_OFFSET, ncclInt64},
    {MPI_COUNT, ncclInt64},
    {MPI_UINT64_T, ncclUint64},     {MPI_UNSIGNED_LONG, ncclUint64},
    {MPI_UNSIGNED_LONG_LONG, ncclUint64},
    {MPI_FLOAT, ncclFloat32},       {MPI_DOUBLE, ncclFloat64},
    {MPIX_C_FLOAT16, ncclFloat16},
};

bool arithmetic_op(MPI_Op op, ncclRedOp_t* out) {
  if (op == MPI_SUM) *out = ncclSum;
  else if (op == MPI_PROD) *out = ncclProd;
  else if (op == MPI_MAX) *out = ncclMax;
  else if (op == MPI_MIN) *out = ncclMin;
  else return false;
  return true;
}

// A bool is 0 or 1: logical and is their minimum, logical or their maximum. MPI allows only the
// logical ops on bools (MPICH refuses MPI_MAX there), so only those map.
bool logical_reduction(MPI_Datatype type, MPI_Op op, ncclDataType_t* nccl_type, ncclRedOp_t* nccl_op) {
  if (type != MPI_C_BOOL && type != MPI_CXX_BOOL) return false;
  if (op == MPI_LAND) *nccl_op = ncclMin;
  else if (op == MPI_LOR) *nccl_op = ncclMax;
  else return false;
  *nccl_type = ncclUint8;
  return true;
}

}  // namespace

bool to_nccl_type(MPI_Datatype type, ncclDataType_t* out) {
  for (const TypeEntry& entry : kArithmetic) {
    if (entry.mpi == type) {
      *out = entry.nccl;
      return true;
    }
  }
  return false;
}

bool to_nccl_reduction(MPI_Datatype type, MPI_Op op, ncclDataType_t* nccl_type, ncclRedOp_t* nccl_op) {
  if (logical_reduction(type, op, nccl_type, nccl_op)) return true;
  return to_nccl_type(type, nccl_type) && arithmetic_op(op, nccl_op);
}

}  // namespace mcrp
