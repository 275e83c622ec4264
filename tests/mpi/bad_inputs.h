// The erroneous calls of test_bad_input: one mistake at a time, made alike by every rank, in a call
// that is otherwise correct. Each case says which MPI error class the call must return and, where
// Debian's MPICH 4.0.2 does not report the mistake itself (it crashes, aborts or returns success;
// docs/base-mpi-defects.md), which defect that is: those cases are the library's alone (checked
// "beyond base", skipped without the library).
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/count_forms.h"
#include "tests/mpi/entry_points.h"
#include "tests/mpi/memory_space.h"
#include "tests/mpi/p2p_entry_points.h"

namespace mcrp_test {

enum class Mistake {
  null_buffer,           // a significant buffer is NULL, its count nonzero
  null_counts,           // a significant counts array of a vector form is NULL
  negative_count,        // a significant count is -1
  overflowing_count,     // count * extent beyond 2^63 (_c: 2^61+1 ints; int: INT_MAX of a 2^33-extent type)
  counts_past_int_max,   // not a mistake: vector counts summing past INT_MAX of a zero-size type must work
  null_datatype,         // MPI_DATATYPE_NULL for a significant datatype
  uncommitted_datatype,  // a derived datatype never committed
  null_op,               // MPI_OP_NULL in a reduction
  invalid_root,          // root == communicator size
  invalid_rank,          // dest or source == communicator size
  invalid_tag,           // tag -5
  comm_null,             // MPI_COMM_NULL
  freed_comm,            // the handle of a communicator already freed
  in_place_both_sides,   // MPI_IN_PLACE as send and receive buffer (bcast: as its buffer)
  in_place_off_root,     // MPI_IN_PLACE off the root of reduce, gather(v), scatter(v) (root: NULL buffer)
  in_place_intercomm,    // MPI_IN_PLACE on an intercommunicator
  invalid_message,       // MPI_Mrecv of MPI_MESSAGE_NULL
};
inline constexpr Mistake kAllMistakes[] = {
    Mistake::null_buffer,        Mistake::null_counts,        Mistake::negative_count,     Mistake::overflowing_count,
    Mistake::counts_past_int_max, Mistake::null_datatype,     Mistake::uncommitted_datatype,
    Mistake::null_op,            Mistake::invalid_root,       Mistake::invalid_rank,
    Mistake::invalid_tag,        Mistake::comm_null,          Mistake::freed_comm,
    Mistake::in_place_both_sides, Mistake::in_place_off_root, Mistake::in_place_intercomm,
    Mistake::invalid_message};
const char* mistake_name(Mistake mistake);

// What the call must return, and whether the base MPI can be asked at all.
struct Expectation {
  bool applicable = false;
  int error_class = MPI_SUCCESS;      // MPI_SUCCESS: the call is correct and must work
  const char* base_defect = nullptr;  // MPICH 4.0.2 does not report it: a library-only check
};

// Datatypes the mistakes need, made once (collectively harmless: local calls only).
struct BadTypes {
  MPI_Datatype uncommitted = MPI_DATATYPE_NULL;   // two ints, never committed
  MPI_Datatype huge_extent = MPI_DATATYPE_NULL;   // one int, extent 2^33
  MPI_Datatype zero_size = MPI_DATATYPE_NULL;     // no elements
  BadTypes();
  ~BadTypes();
  BadTypes(const BadTypes&) = delete;
  BadTypes& operator=(const BadTypes&) = delete;
};

// The communicators a case may run on: intracommunicator (a dup of WORLD) or intercommunicator.
struct BadComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int peers = 1;  // remote size on an intercommunicator
  bool inter = false;
};

// Everything a case's call needs, its buffers in the test's (guarded) memory space.
struct BadCall {
  Expectation expect;
  std::unique_ptr<SpaceBuffer<int>> send, recv;
  std::vector<MPI_Count> counts, other_counts;
  std::vector<MPI_Aint> displs;
  CollArgs coll;
  P2PArgs p2p;
  MPI_Message message = MPI_MESSAGE_NO_PROC;
};

// `freed` is the handle of a communicator freed just before (used by Mistake::freed_comm).
std::unique_ptr<BadCall> bad_collective(Coll coll, CountForm form, Mistake mistake, const BadComm& comm,
                                        MPI_Comm freed, const BadTypes& types, MemorySpace& space);
// `self_peer`: Sendrecv and Sendrecv_replace with this rank as both partners (the buffers are then
// significant, so the library's device path sees them), else every partner is MPI_PROC_NULL.
std::unique_ptr<BadCall> bad_p2p(P2POp op, CountForm form, Mistake mistake, bool self_peer, const BadComm& comm,
                                 MPI_Comm freed, const BadTypes& types, MemorySpace& space);

}  // namespace mcrp_test
