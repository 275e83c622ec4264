// The pipelined staged path's chunking (runtime/chunk_plan.h): boundaries on whole units, the
// last chunk short, one chunk (not pipelined) up to the setting, the 1024-chunk cap, off at 0.
#include <gtest/gtest.h>

#include "runtime/chunk_plan.h"

namespace mcrp {
namespace {

// Every byte of the row in exactly one chunk, in order, each boundary on a unit.
void expect_tiles(const ChunkPlan& plan, std::uint64_t unit) {
  std::size_t next = 0;
  for (int k = 0; k < plan.chunks; ++k) {
    const ByteRange r = plan.chunk(k);
    EXPECT_EQ(r.lo, next) << "chunk " << k;
    EXPECT_GT(r.bytes(), 0u) << "chunk " << k;
    EXPECT_EQ(r.lo % unit, 0u) << "chunk " << k;
    next = r.hi;
  }
  EXPECT_EQ(next, plan.row_bytes);
}

TEST(ChunkPlan, BoundariesAroundOneChunk) {
  EXPECT_EQ(plan_chunks(0, 4, 64).chunks, 0);
  EXPECT_EQ(plan_chunks(4, 4, 64).chunks, 1);
  EXPECT_EQ(plan_chunks(60, 4, 64).chunks, 1);   // one element under
  EXPECT_EQ(plan_chunks(64, 4, 64).chunks, 1);   // exactly one chunk
  const ChunkPlan over = plan_chunks(68, 4, 64);  // one element over
  EXPECT_EQ(over.chunks, 2);
  EXPECT_EQ(over.chunk(1).bytes(), 4u);
  expect_tiles(over, 4);
  EXPECT_FALSE(plan_chunks(64, 4, 64).pipelined());
  EXPECT_TRUE(over.pipelined());
}

TEST(ChunkPlan, WholeElementsOnly) {
  const ChunkPlan plan = plan_chunks(12 * 100, 12, 64);  // 12-byte elements, 64-byte setting
  EXPECT_EQ(plan.chunk_bytes, 60u);                     // 5 elements, never 5 and a third
  EXPECT_EQ(plan.chunks, 20);
  expect_tiles(plan, 12);
  const ChunkPlan big = plan_chunks(8 * 3, 8, 4);  // an element larger than the setting: one each
  EXPECT_EQ(big.chunk_bytes, 8u);
  EXPECT_EQ(big.chunks, 3);
}

TEST(ChunkPlan, MovementUnitAndShortLastChunk) {
  const ChunkPlan plan = plan_chunks(1000, kMovementUnit, 100);  // the setting rounds down to 96
  EXPECT_EQ(plan.chunk_bytes, 96u);
  EXPECT_EQ(plan.chunks, 11);
  EXPECT_EQ(plan.chunk(10).bytes(), 40u);
  expect_tiles(plan, kMovementUnit);
}

TEST(ChunkPlan, CapGrowsTheChunk) {
  const ChunkPlan plan = plan_chunks(4 * 20000, 4, 64);  // 1250 chunks of 16 ints would exceed 1024
  EXPECT_LE(plan.chunks, kMaxChunks);
  EXPECT_EQ(plan.chunk_bytes, 4u * 20);
  EXPECT_EQ(plan.chunks, 1000);
  expect_tiles(plan, 4);
}

TEST(ChunkPlan, ZeroSettingTurnsItOff) {
  const ChunkPlan plan = plan_chunks(1 << 30, 4, 0);
  EXPECT_EQ(plan.chunks, 1);
  EXPECT_FALSE(plan.pipelined());
}

}  // namespace
}  // namespace mcrp
