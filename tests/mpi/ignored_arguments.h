// The cases of test_ignored_arguments: for each collective, one correct call per rank in which every
// argument MPI declares insignificant on that rank holds garbage (-1 counts, MPI_DATATYPE_NULL,
// null arrays, a poison pointer or NULL for buffers), plus the contents each significant output
// buffer must have after it. Significance follows the standard per collective, per rank (root, non-root, MPI_ROOT,
// MPI_PROC_NULL), with and without MPI_IN_PLACE, on intra- and intercommunicators.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/entry_points.h"
#include "tests/mpi/memory_space.h"

namespace mcrp_test {

// The communicator a case runs on, as the case sees it.
struct CaseComm {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string name;
  int rank = 0;
  int size = 1;
  bool inter = false;
  int group = 0;   // intercommunicators: which of the two groups this rank is in (0 or 1)
  int peers = 1;   // ranks blocks go to or come from: the remote group's size on an intercommunicator
};

// One point of the matrix besides collective and form.
struct Variant {
  int root_group = 0;  // intercommunicators: the group the root is in
  int root = 0;        // rank of the root in its group
  bool in_place = false;
  MPI_Count n = 0;     // elements per block
  // Ignored buffers are NULL (what C programs pass most) instead of the poison pointer, which
  // crashes where dereferenced but passes a base MPI's null checks.
  bool null_buffers = false;
};

// A significant buffer and what it must hold afterwards (its first `checked` elements).
struct CheckedBuffer {
  std::unique_ptr<SpaceBuffer<int>> buffer;
  std::vector<int> expected;
  std::size_t checked = 0;
};

struct Case {
  bool applicable = false;  // e.g. in-place forms on an intercommunicator, or scans on one
  CollArgs args;
  std::vector<CheckedBuffer> outputs;
  std::vector<std::unique_ptr<SpaceBuffer<int>>> inputs;
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::string description;  // the rank's role and which arguments hold garbage
};

// Builds this rank's side of the case; its buffers live in `space`.
std::unique_ptr<Case> build_case(Coll coll, const CaseComm& comm, const Variant& variant, MemorySpace& space);

}  // namespace mcrp_test
