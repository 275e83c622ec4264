// Copies of the counts, displacements and datatypes arrays of a collective call, for work that
// outlives the call: a persistent request's starts and nonblocking work queued behind an NCCL
// communicator's setup. MPICH reads these arrays while the call runs (a persistent init builds its
// schedule then), and programs rely on it: mpi4py 4.1 frees the arrays of Allgatherv_init,
// Reduce_scatter_init, Iallgatherv, Ireduce_scatter and others as soon as the call has returned.
// Which arrays a rank reads, and how many entries, is the layouts' to say (keep_arrays in
// collectives/layout.h and collectives/block_layout.h); this only holds the copies.
#pragma once
#include <mpi.h>

#include <vector>

#include "collectives/call.h"

namespace mcrp {

class ArrayCopies {
 public:
  ArrayCopies() = default;
  // A copy would leave the calls that point into this one's storage pointing there still.
  ArrayCopies(const ArrayCopies&) = delete;
  ArrayCopies& operator=(const ArrayCopies&) = delete;
  ArrayCopies(ArrayCopies&&) = default;  // the copies' storage moves along: pointers stay valid
  ArrayCopies& operator=(ArrayCopies&&) = default;

  // A copy of the first `entries` entries of `array`, in its own width; `array` itself when it
  // is absent or `entries` is 0 (an array MPI ignores on this rank is passed on as it came).
  CountArray keep(const CountArray& array, int entries);
  const MPI_Datatype* keep(const MPI_Datatype* types, int entries);

  // Every datatype kept, in the order kept (for the holds of runtime/handle_holds.h).
  std::vector<MPI_Datatype> datatypes() const;

 private:
  // Vectors of vectors: growing the outer one moves the inner ones, whose buffers stay put.
  std::vector<std::vector<int>> narrow_;
  std::vector<std::vector<MPI_Count>> wide_;
  std::vector<std::vector<MPI_Datatype>> types_;
};

// A call and the copies its arrays point into, kept together (keep_arrays fills both).
template <class Call>
struct KeptCall {
  ArrayCopies copies;
  Call call;
};

}  // namespace mcrp
