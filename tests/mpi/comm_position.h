// A rank's place in a communicator, as tests ask for it in one expression.
#pragma once
#include <mpi.h>

namespace mcrp_test {

inline int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

inline int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

}  // namespace mcrp_test
