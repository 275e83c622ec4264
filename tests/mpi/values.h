// Deterministic test data: every rank can recompute what any other rank sent, so each result is
// compared with a reference computed locally, never with another MPI call.
#pragma once
#include <mpi.h>

#include <ostream>
#include <vector>

namespace mcrp_test {

// Small integers (|v| <= 1002), exact in every tested type and in sums over a few ranks.
template <class T>
T value_of(int rank, MPI_Count index) {
  return static_cast<T>((static_cast<long>(rank) * 1009 + index * 7919) % 2003 - 1000);
}

// What `src` sends to `dst` in a personalized collective (scatter, gather, alltoall).
constexpr MPI_Count kBlockStride = 1 << 20;
template <class T>
T block_value(int src, int dst, MPI_Count index) {
  return value_of<T>(src, dst * kBlockStride + index);
}

// Fills untouched parts of receive buffers; outside the range of value_of, so a stray write shows.
template <class T>
constexpr T sentinel() {
  return static_cast<T>(-7777);
}

template <class T>
std::vector<T> rank_values(int rank, MPI_Count n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) v[i] = value_of<T>(rank, i);
  return v;
}

// The element types the tests run on, with their MPI datatype and printable name.
template <class T>
struct Mpi;
#define MCRP_TEST_ELEMENT_TYPE(T, MPI_TYPE)                \
  template <>                                              \
  struct Mpi<T> {                                          \
    static MPI_Datatype type() { return MPI_TYPE; }        \
    static constexpr const char* name = #MPI_TYPE;         \
  };
MCRP_TEST_ELEMENT_TYPE(int, MPI_INT)
MCRP_TEST_ELEMENT_TYPE(long, MPI_LONG)
MCRP_TEST_ELEMENT_TYPE(float, MPI_FLOAT)
MCRP_TEST_ELEMENT_TYPE(double, MPI_DOUBLE)
#undef MCRP_TEST_ELEMENT_TYPE

// Calls fn(T{}) for each tested element type.
template <class Fn>
void for_each_type(Fn&& fn) {
  fn(int{});
  fn(long{});
  fn(float{});
  fn(double{});
}

// Data movement depends on the element size, not its meaning: one 4-byte and one 8-byte type.
template <class Fn>
void for_each_width(Fn&& fn) {
  fn(int{});
  fn(double{});
}

// MPI_DOUBLE_INT's layout, for MINLOC.
struct DoubleInt {
  double value;
  int index;
  bool operator==(const DoubleInt& o) const { return value == o.value && index == o.index; }
};
inline std::ostream& operator<<(std::ostream& out, const DoubleInt& v) {
  return out << "(" << v.value << "," << v.index << ")";
}

}  // namespace mcrp_test
