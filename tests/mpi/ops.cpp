#include "tests/mpi/ops.h"

namespace mcrp_test {

namespace {

// MPI user functions compute inoutvec[i] = invec[i] op inoutvec[i].
void user_sum_fn(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] + b[i];
}

void user_first_fn(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i];
}

}  // namespace

const char* op_name(OpKind op) {
  switch (op) {
    case OpKind::sum:
      return "SUM";
    case OpKind::max:
      return "MAX";
    case OpKind::user_sum:
      return "user-sum";
    case OpKind::user_first:
      return "user-first(noncommutative)";
  }
  return "?";
}

OpTable::OpTable() {
  MPI_Op_create(user_sum_fn, /*commute=*/1, &user_sum_);
  MPI_Op_create(user_first_fn, /*commute=*/0, &user_first_);
}

OpTable::~OpTable() {
  MPI_Op_free(&user_sum_);
  MPI_Op_free(&user_first_);
}

MPI_Op OpTable::get(OpKind op) const {
  switch (op) {
    case OpKind::sum:
      return MPI_SUM;
    case OpKind::max:
      return MPI_MAX;
    case OpKind::user_sum:
      return user_sum_;
    case OpKind::user_first:
      return user_first_;
  }
  return MPI_OP_NULL;
}

}  // namespace mcrp_test
