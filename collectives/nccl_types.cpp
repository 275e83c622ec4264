#include "collectives/nccl_types.h"

#include <climits>
#include <cstddef>
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
constexpr TypeEntry kArithmetic[] = {
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

// kArithmetic by the handle's low byte (the MPICH ABI numbers predefined types there), so a device
// call's lookup is one load and compare instead of a search; the whole handle is kept and compared.
constexpr std::size_t low_byte(MPI_Datatype type) { return static_cast<unsigned>(type) & 0xffu; }

struct TypeIndex {
  TypeEntry by_low_byte[256] = {};
  bool collision = false;  // two types of the table share a low byte
};

constexpr TypeIndex make_type_index() {
  TypeIndex index;
  for (TypeEntry& slot : index.by_low_byte) slot = {MPI_DATATYPE_NULL, ncclInt8};
  for (const TypeEntry& entry : kArithmetic) {
    TypeEntry& slot = index.by_low_byte[low_byte(entry.mpi)];
    if (slot.mpi != MPI_DATATYPE_NULL && slot.mpi != entry.mpi) index.collision = true;
    slot = entry;
  }
  return index;
}

constexpr TypeIndex kTypeIndex = make_type_index();
static_assert(!kTypeIndex.collision, "two NCCL-reducible datatypes share a low byte: index them otherwise");

}  // namespace

bool to_nccl_type(MPI_Datatype type, ncclDataType_t* out) {
  const TypeEntry& entry = kTypeIndex.by_low_byte[low_byte(type)];
  if (entry.mpi != type || type == MPI_DATATYPE_NULL) return false;
  *out = entry.nccl;
  return true;
}

bool to_nccl_reduction(MPI_Datatype type, MPI_Op op, ncclDataType_t* nccl_type, ncclRedOp_t* nccl_op) {
  if (logical_reduction(type, op, nccl_type, nccl_op)) return true;
  return to_nccl_type(type, nccl_type) && arithmetic_op(op, nccl_op);
}

}  // namespace mcrp
