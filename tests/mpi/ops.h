// Reduction operators under test and their local reference: built-in SUM and MAX for every type,
// and two user operators made with MPI_Op_create on MPI_INT: a commutative sum, and a
// non-commutative "keep the left operand" whose result (rank 0's value) shows whether the
// reduction kept rank order.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace mcrp_test {

enum class OpKind { sum, max, user_sum, user_first };
const char* op_name(OpKind op);

// The operators applicable to T: user operators are defined on MPI_INT only.
template <class T>
std::vector<OpKind> ops_for() {
  if (std::is_same_v<T, int>) return {OpKind::sum, OpKind::max, OpKind::user_sum, OpKind::user_first};
  return {OpKind::sum, OpKind::max};
}

// Owns the user operators for the length of a test program (freed before MPI_Finalize).
class OpTable {
 public:
  OpTable();
  ~OpTable();
  OpTable(const OpTable&) = delete;
  OpTable& operator=(const OpTable&) = delete;
  MPI_Op get(OpKind op) const;

 private:
  MPI_Op user_sum_ = MPI_OP_NULL;
  MPI_Op user_first_ = MPI_OP_NULL;
};

// acc op x, with acc holding the lower ranks' result (MPI's order for non-commutative operators).
template <class T>
T combine(OpKind op, T acc, T x) {
  switch (op) {
    case OpKind::sum:
    case OpKind::user_sum:
      return acc + x;
    case OpKind::max:
      return std::max(acc, x);
    case OpKind::user_first:
      return acc;
  }
  return acc;
}

// Reference for element i..i+n of the reduction over ranks first..last of value(rank, i).
template <class T, class ValueFn>
std::vector<T> fold_ranks(OpKind op, int first, int last, MPI_Count offset, MPI_Count n, ValueFn value) {
  std::vector<T> out(static_cast<size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) {
    T acc = value(first, offset + i);
    for (int r = first + 1; r <= last; ++r) acc = combine(op, acc, value(r, offset + i));
    out[i] = acc;
  }
  return out;
}

}  // namespace mcrp_test
