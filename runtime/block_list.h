// The blocks of a buffer side (runtime/buffer.h). Nearly every side of a call is one block -- a
// count of elements at the buffer's start -- so one block lives inside the list and only per-rank
// and derived layouts use the heap: a std::vector cost every device call an allocation and its free
// (about 150 instructions, cost.device_calls). The library takes no dependency for this: a
// small-vector library (Boost.Container, Abseil) would be the GPU machine's largest build
// dependency, and these are the few operations the layouts need.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace mcrp {

struct Block {
  MPI_Count displacement = 0;  // in extents of the side's datatype
  MPI_Count count = 0;         // elements of the side's datatype
};

class BlockList {
 public:
  BlockList() = default;
  BlockList(std::initializer_list<Block> blocks) { assign(blocks.begin(), blocks.size()); }
  BlockList& operator=(std::initializer_list<Block> blocks) {
    clear();
    assign(blocks.begin(), blocks.size());
    return *this;
  }

  std::size_t size() const { return on_heap_ ? spilled_.size() : inline_size_; }
  bool empty() const { return size() == 0; }
  const Block* begin() const { return on_heap_ ? spilled_.data() : &inline_block_; }
  const Block* end() const { return begin() + size(); }
  Block* begin() { return on_heap_ ? spilled_.data() : &inline_block_; }
  Block* end() { return begin() + size(); }
  const Block& operator[](std::size_t i) const { return begin()[i]; }
  Block& operator[](std::size_t i) { return begin()[i]; }

  void reserve(std::size_t n) {
    if (n > 1) spill(n);
  }
  void push_back(const Block& block) {
    if (!on_heap_ && inline_size_ == 0) {
      inline_block_ = block;
      inline_size_ = 1;
      return;
    }
    spill(size() + 1);
    spilled_.push_back(block);
  }
  void clear() {
    spilled_.clear();
    on_heap_ = false;
    inline_size_ = 0;
  }

 private:
  void assign(const Block* blocks, std::size_t n) {
    if (n <= 1) {
      if (n == 1) inline_block_ = blocks[0];
      inline_size_ = n;
      return;
    }
    spilled_.assign(blocks, blocks + n);
    on_heap_ = true;
  }
  // Moves the inline block (if any) to the heap, with room for `n`.
  void spill(std::size_t n) {
    spilled_.reserve(n);
    if (on_heap_) return;
    if (inline_size_ == 1) spilled_.push_back(inline_block_);
    inline_size_ = 0;
    on_heap_ = true;
  }

  Block inline_block_{};
  std::size_t inline_size_ = 0;  // 0 or 1 while the blocks are inline
  bool on_heap_ = false;
  std::vector<Block> spilled_;
};

}  // namespace mcrp
