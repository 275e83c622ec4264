// What a data shape means for buffers: how many elements each side holds, what goes in, and what
// must come out. The single place that knows the expected result of every collective.
#pragma once
#include <cstddef>

#include "osu/core/collective.h"

namespace osu {

struct Layout {
  std::size_t send;     // elements in the send buffer
  std::size_t recv;     // elements in the receive buffer
  std::size_t checked;  // leading receive elements whose value is defined on this rank
};

bool is_reduction(Shape shape);

// n: per-rank block in elements, ranks: communicator size.
Layout layout(Shape shape, std::size_t n, int rank, int ranks, int root);

// The value of receive element j on `rank` after the collective, inputs being input(r, i, salt).
long expected(Shape shape, std::size_t j, std::size_t n, int rank, int ranks, int root, int salt);

// nccl-tests' bandwidth conventions: algorithm bandwidth is alg_bytes / time, bus bandwidth that
// times bus_factor (what each link carries, comparable across collectives and rank counts).
struct Traffic {
  double alg_bytes;
  double bus_factor;
};
Traffic traffic(Shape shape, std::size_t size, int ranks);

// The value receive element j starts with: the root's data for broadcast, else kSentinel.
long initial_receive(Shape shape, std::size_t j, int rank, int root, int salt);

}  // namespace osu
