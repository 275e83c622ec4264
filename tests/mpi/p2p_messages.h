// The messages point-to-point tests send: element i of what `src` sends with `tag` is value(src, tag,
// i), so a receiver checks every element against its envelope, and kSentinel marks what must stay
// unwritten.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace mcrp_test {

constexpr int kSentinel = -7777;

inline int value(int src, int tag, MPI_Count i) {
  return static_cast<int>((src * 131 + tag * 7919 + i * 3) % 1000003);
}

inline std::vector<int> message(int src, int tag, MPI_Count n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) v[i] = value(src, tag, i);
  return v;
}

}  // namespace mcrp_test
