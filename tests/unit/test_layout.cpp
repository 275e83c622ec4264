// Which buffers each collective touches on a rank, including MPI_IN_PLACE and root-only buffers:
// the staged path copies exactly these, so a wrong rule here means lost or clobbered data.
#include <gtest/gtest.h>

#include "collectives/call.h"
#include "collectives/layout.h"

namespace mcrp {
namespace {

char send_storage[64];
char recv_storage[64];
void* const S = send_storage;
void* const R = recv_storage;

std::vector<std::pair<MPI_Count, MPI_Count>> blocks(const BufferSide& side) {
  std::vector<std::pair<MPI_Count, MPI_Count>> out;
  for (const Block& b : side.blocks) out.emplace_back(b.displacement, b.count);
  return out;
}
using Blocks = std::vector<std::pair<MPI_Count, MPI_Count>>;

TEST(Layout, AllreduceInPlaceReadsAndWritesTheReceiveBuffer) {
  const Layout plain = layout_of(describe::allreduce(S, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_TRUE(plain.send.read);
  EXPECT_FALSE(plain.recv.read);
  EXPECT_TRUE(plain.recv.written);
  const Layout in_place = layout_of(describe::allreduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_FALSE(in_place.send.significant());
  EXPECT_TRUE(in_place.recv.read);
  EXPECT_TRUE(in_place.recv.written);
}

TEST(Layout, ReduceReceiveBufferMattersOnlyAtTheRoot) {
  const CollCall call = describe::reduce(S, R, 5, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
  EXPECT_TRUE(layout_of(call, 2, 3).recv.significant());
  EXPECT_FALSE(layout_of(call, 0, 3).recv.significant());
  const CollCall in_place = describe::reduce(MPI_IN_PLACE, R, 5, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD);
  EXPECT_FALSE(layout_of(in_place, 2, 3).send.significant());
}

TEST(Layout, BcastReadsAtRootAndWritesElsewhere) {
  const CollCall call = describe::bcast(R, 7, MPI_INT, 1, MPI_COMM_WORLD);
  const Layout root = layout_of(call, 1, 3);
  const Layout other = layout_of(call, 0, 3);
  EXPECT_TRUE(root.recv.read);
  EXPECT_FALSE(root.recv.written);
  EXPECT_TRUE(other.recv.written);
  EXPECT_FALSE(other.recv.read);
}

TEST(Layout, AllgatherHasOneBlockPerRank) {
  const Layout l = layout_of(describe::allgather(S, 4, MPI_INT, R, 4, MPI_INT, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(l.recv), (Blocks{{0, 4}, {4, 4}, {8, 4}}));
  EXPECT_EQ(blocks(l.send), (Blocks{{0, 4}}));
}

TEST(Layout, VectorFormsUseCountsAndDisplacements) {
  const int counts[] = {1, 0, 3};
  const int displs[] = {5, 0, 1};
  const Layout l = layout_of(describe::allgatherv(S, 3, MPI_INT, R, counts, displs, MPI_INT, MPI_COMM_WORLD), 2, 3);
  EXPECT_EQ(blocks(l.recv), (Blocks{{5, 1}, {0, 0}, {1, 3}}));
  const MPI_Count wide_counts[] = {1, 0, 3};
  const MPI_Aint wide_displs[] = {5, 0, 1};
  const Layout wide =
      layout_of(describe::allgatherv(S, 3, MPI_INT, R, wide_counts, wide_displs, MPI_INT, MPI_COMM_WORLD), 2, 3);
  EXPECT_EQ(blocks(wide.recv), blocks(l.recv));  // int and large-count forms describe the same call
}

TEST(Layout, ScatterInPlaceIsOnTheReceiveBufferAtTheRoot) {
  const CollCall call = describe::scatter(S, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, 0, MPI_COMM_WORLD);
  const Layout root = layout_of(call, 0, 3);
  EXPECT_FALSE(root.recv.significant());
  EXPECT_EQ(blocks(root.send), (Blocks{{0, 2}, {2, 2}, {4, 2}}));
  EXPECT_FALSE(layout_of(call, 1, 3).send.significant());
}

TEST(Layout, ReduceScatterInPlaceCoversTheWholeInput) {
  const int counts[] = {2, 3, 4};
  const Layout in_place = layout_of(describe::reduce_scatter(MPI_IN_PLACE, R, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(in_place.recv), (Blocks{{0, 9}}));
  const Layout plain = layout_of(describe::reduce_scatter(S, R, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 1, 3);
  EXPECT_EQ(blocks(plain.send), (Blocks{{0, 9}}));
  EXPECT_EQ(blocks(plain.recv), (Blocks{{0, 3}}));
  const Layout block = layout_of(describe::reduce_scatter_block(MPI_IN_PLACE, R, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 3);
  EXPECT_EQ(blocks(block.recv), (Blocks{{0, 6}}));
}

TEST(Layout, SpanFollowsExtentAndTrueBounds) {
  BufferSide side;
  side.base = recv_storage;
  side.blocks = {{2, 3}, {0, 1}};
  TypeInfo strided;
  strided.size = 4;
  strided.extent = 12;
  strided.true_lb = 0;
  strided.true_extent = 4;
  const Span span = span_of(side, strided);
  EXPECT_EQ(span.lo, 0);
  EXPECT_EQ(span.hi, 4 * 12 + 4);
  EXPECT_FALSE(strided.contiguous());
  side.blocks = {{0, 0}};
  EXPECT_EQ(span_of(side, strided).bytes(), 0u);
}

TEST(Layout, BarrierTouchesNothing) {
  const Layout l = layout_of(describe::barrier(MPI_COMM_WORLD), 0, 2);
  EXPECT_FALSE(l.send.significant());
  EXPECT_FALSE(l.recv.significant());
}

}  // namespace
}  // namespace mcrp
