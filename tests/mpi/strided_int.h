// A derived datatype of one int followed by a hole of one int (extent 8 bytes): test programs use it
// to prove that a call keeps the bytes between elements. Made and committed once per process.
#pragma once
#include <mpi.h>

namespace mcrp_test {

inline MPI_Datatype strided_int() {
  static MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}

}  // namespace mcrp_test
