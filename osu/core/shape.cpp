#include "osu/core/shape.h"

#include "osu/core/element.h"

namespace osu {
namespace {

long sum_over_ranks(std::size_t index, int ranks, int salt) {
  long s = 0;
  for (int r = 0; r < ranks; ++r) s += input(r, index, salt);
  return s;
}

}  // namespace

bool is_reduction(Shape shape) {
  return shape == Shape::all_reduce || shape == Shape::root_reduce || shape == Shape::reduce_scatter;
}

Layout layout(Shape shape, std::size_t n, int rank, int ranks, int root) {
  const std::size_t all = n * static_cast<std::size_t>(ranks);
  const bool at_root = rank == root;
  switch (shape) {
    case Shape::all_reduce: return {n, n, n};
    case Shape::root_reduce: return {n, n, at_root ? n : 0};
    case Shape::broadcast: return {0, n, n};
    case Shape::all_gather: return {n, all, all};
    case Shape::root_gather: return {n, all, at_root ? all : 0};
    case Shape::all_to_all: return {all, all, all};
    case Shape::reduce_scatter: return {all, n, n};
    case Shape::root_scatter: return {all, n, n};
    case Shape::none: break;
  }
  return {0, 0, 0};
}

long expected(Shape shape, std::size_t j, std::size_t n, int rank, int ranks, int root, int salt) {
  const std::size_t mine = static_cast<std::size_t>(rank) * n;  // this rank's block in a full buffer
  switch (shape) {
    case Shape::all_reduce:
    case Shape::root_reduce: return sum_over_ranks(j, ranks, salt);
    case Shape::reduce_scatter: return sum_over_ranks(mine + j, ranks, salt);
    case Shape::broadcast: return input(root, j, salt);
    case Shape::all_gather:
    case Shape::root_gather: return input(static_cast<int>(j / n), j % n, salt);
    case Shape::all_to_all: return input(static_cast<int>(j / n), mine + j % n, salt);
    case Shape::root_scatter: return input(root, mine + j, salt);
    case Shape::none: break;
  }
  return kSentinel;
}

Traffic traffic(Shape shape, std::size_t size, int ranks) {
  const double bytes = static_cast<double>(size), p = ranks, spread = (p - 1) / p;
  switch (shape) {
    case Shape::all_reduce: return {bytes, 2 * spread};
    case Shape::root_reduce:
    case Shape::broadcast: return {bytes, 1};
    case Shape::all_gather:
    case Shape::root_gather:
    case Shape::all_to_all:
    case Shape::reduce_scatter:
    case Shape::root_scatter: return {bytes * p, spread};
    case Shape::none: break;
  }
  return {0, 0};
}

long initial_receive(Shape shape, std::size_t j, int rank, int root, int salt) {
  return shape == Shape::broadcast && rank == root ? input(root, j, salt) : kSentinel;
}

}  // namespace osu
