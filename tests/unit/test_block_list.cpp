// BlockList (runtime/block_list.h): one block inline, more on the heap, in order either way.
#include "runtime/block_list.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using mcrp::Block;
using mcrp::BlockList;

std::vector<MPI_Count> displacements(const BlockList& list) {
  std::vector<MPI_Count> out;
  for (const Block& b : list) out.push_back(b.displacement);
  return out;
}

TEST(BlockList, StartsEmpty) {
  BlockList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.begin(), list.end());
}

TEST(BlockList, HoldsOneBlockInsideItself) {
  BlockList list{Block{3, 7}};
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].displacement, 3);
  EXPECT_EQ(list[0].count, 7);
  // The block lives in the object: its address is inside it.
  const auto* object = reinterpret_cast<const char*>(&list);
  const auto* block = reinterpret_cast<const char*>(&list[0]);
  EXPECT_TRUE(block >= object && block < object + sizeof list);
}

TEST(BlockList, GrowsOntoTheHeapInOrder) {
  BlockList list;
  list.push_back(Block{0, 1});
  list.push_back(Block{5, 1});
  list.push_back(Block{9, 2});
  EXPECT_EQ(displacements(list), (std::vector<MPI_Count>{0, 5, 9}));
  list[1].count = 4;
  EXPECT_EQ(list[1].count, 4);
}

TEST(BlockList, ReserveKeepsWhatIsThere) {
  BlockList list{Block{2, 1}};
  list.reserve(8);
  list.push_back(Block{6, 1});
  EXPECT_EQ(displacements(list), (std::vector<MPI_Count>{2, 6}));
  BlockList one;
  one.reserve(1);  // one block still fits inside
  one.push_back(Block{4, 1});
  EXPECT_EQ(displacements(one), (std::vector<MPI_Count>{4}));
}

TEST(BlockList, AssignmentReplacesEitherForm) {
  BlockList list{Block{0, 1}, Block{1, 1}, Block{2, 1}};
  list = {Block{8, 8}};
  EXPECT_EQ(displacements(list), (std::vector<MPI_Count>{8}));
  list = {Block{1, 1}, Block{3, 1}};
  EXPECT_EQ(displacements(list), (std::vector<MPI_Count>{1, 3}));
  list = {};
  EXPECT_TRUE(list.empty());
}

TEST(BlockList, CopiesAndMovesKeepTheBlocks) {
  BlockList inline_one{Block{7, 1}};
  BlockList copy = inline_one;
  EXPECT_EQ(displacements(copy), (std::vector<MPI_Count>{7}));
  EXPECT_NE(&copy[0], &inline_one[0]);
  BlockList many{Block{1, 1}, Block{2, 1}};
  BlockList moved = std::move(many);
  EXPECT_EQ(displacements(moved), (std::vector<MPI_Count>{1, 2}));
  BlockList moved_inline = std::move(copy);
  EXPECT_EQ(displacements(moved_inline), (std::vector<MPI_Count>{7}));
}

}  // namespace
