#include <gtest/gtest.h>

#include "collectives/kind.h"

namespace mcrp {
namespace {

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
