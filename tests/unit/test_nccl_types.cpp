#include <gtest/gtest.h>

#include "collectives/kind.h"
#include "collectives/nccl_types.h"

namespace mcrp {
namespace {

TEST(NcclTypes, MapsPredefinedTypes) {
  const std::pair<MPI_Datatype, ncclDataType_t> expected[] = {
      {MPI_INT, ncclInt32},         {MPI_UNSIGNED, ncclUint32},       {MPI_LONG, ncclInt64},
      {MPI_LONG_LONG, ncclInt64},   {MPI_UNSIGNED_LONG, ncclUint64},  {MPI_FLOAT, ncclFloat32},
      {MPI_DOUBLE, ncclFloat64},    {MPIX_C_FLOAT16, ncclFloat16},    {MPI_INT8_T, ncclInt8},
      {MPI_UINT8_T, ncclUint8},     {MPI_INT64_T, ncclInt64},         {MPI_UINT64_T, ncclUint64},
  };
  for (const auto& [mpi, nccl] : expected) {
    ncclDataType_t got;
    ASSERT_TRUE(to_nccl_type(mpi, &got));
    EXPECT_EQ(got, nccl);
  }
}

TEST(NcclTypes, RejectsWhatNcclCannotReduce) {
  ncclDataType_t got;
  for (MPI_Datatype t : {MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_INT, MPI_LONG_DOUBLE,
                         MPI_BYTE, MPI_C_BOOL}) {
    EXPECT_FALSE(to_nccl_type(t, &got));
  }
}

TEST(NcclTypes, MapsArithmeticOpsOnly) {
  ncclRedOp_t op;
  ASSERT_TRUE(to_nccl_op(MPI_SUM, &op));
  EXPECT_EQ(op, ncclSum);
  ASSERT_TRUE(to_nccl_op(MPI_PROD, &op));
  EXPECT_EQ(op, ncclProd);
  ASSERT_TRUE(to_nccl_op(MPI_MAX, &op));
  EXPECT_EQ(op, ncclMax);
  ASSERT_TRUE(to_nccl_op(MPI_MIN, &op));
  EXPECT_EQ(op, ncclMin);
  for (MPI_Op o : {MPI_MINLOC, MPI_MAXLOC, MPI_LAND, MPI_BOR, MPI_BXOR, MPI_REPLACE}) EXPECT_FALSE(to_nccl_op(o, &op));
}

TEST(Kinds, NamesRoundTrip) {
  for (int i = 0; i < kCollKindCount; ++i) {
    CollKind parsed;
    ASSERT_TRUE(parse_kind(kind_name(static_cast<CollKind>(i)), &parsed));
    EXPECT_EQ(static_cast<int>(parsed), i);
  }
  CollKind parsed;
  EXPECT_TRUE(parse_kind("ALLREDUCE", &parsed));
  EXPECT_FALSE(parse_kind("allreduc", &parsed));
  EXPECT_STREQ(mpi_name(CollKind::reduce_scatter_block), "MPI_Reduce_scatter_block");
}

}  // namespace
}  // namespace mcrp
