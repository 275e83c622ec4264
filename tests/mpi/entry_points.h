// Every collective entry point as tests call it: one argument record (wide counts, nullable arrays)
// and one call that reaches the blocking, nonblocking or persistent form, int or large-count, of any
// collective. The callers are generated from pmpi/collectives.def, the list the library's wrappers
// come from, so a test that loops over this table reaches all 93 entry points (the nonblocking ones
// waited with MPI_Wait, the persistent ones created, started, waited and freed; their counts and
// displacements arrays are dropped once the nonblocking call or the init has returned, as mpi4py
// drops them: tests/mpi/dropped_arrays.h).
#pragma once
#include <mpi.h>

#include <string>

#include "tests/mpi/count_forms.h"

namespace mcrp_test {

enum class Coll {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) Name,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};
inline constexpr Coll kAllColls[] = {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) Coll::Name,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};
const char* coll_name(Coll coll);  // "Allreduce", ...
bool is_rooted(Coll coll);         // reduce, bcast, gather(v), scatter(v)
bool is_reduction(Coll coll);      // the collectives with an MPI_Op

enum class CallForm { blocking, nonblocking, persistent };
constexpr CallForm kCallForms[] = {CallForm::blocking, CallForm::nonblocking, CallForm::persistent};
const char* call_form_name(CallForm form);  // "blocking", "nonblocking", "persistent"

// All arguments any collective takes. Arrays may be null (MPI lets ignored ones be); the int form
// gets narrowed copies of the non-null ones. `count`/`datatype` are the one-type collectives'
// (reductions, bcast); bcast's buffer is `recvbuf`.
struct CollArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Count sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Count recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  const MPI_Count* sendcounts = nullptr;
  const MPI_Aint* sdispls = nullptr;  // scatterv's displs too
  const MPI_Count* recvcounts = nullptr;
  const MPI_Aint* rdispls = nullptr;  // allgatherv's and gatherv's displs too
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

// Calls the entry point and, for the nonblocking and persistent forms, completes it (persistent:
// init, start, wait, free). Returns the first error code, or MPI_SUCCESS. `size` is the number of
// entries the arrays have (the communicator's size, or remote size on an intercommunicator).
int invoke(Coll coll, CallForm form, CountForm counts, const CollArgs& args, int array_size);
// The same, started only: a blocking call is made (*request MPI_REQUEST_NULL); a nonblocking one
// leaves its request in *request; a persistent one is created and started once, its request left
// to the caller to complete and free (also when the start failed).
int start_collective(Coll coll, CallForm form, CountForm counts, const CollArgs& args, int array_size,
                     MPI_Request* request);

}  // namespace mcrp_test
