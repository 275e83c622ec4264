// Every point-to-point entry point of pmpi/p2p.def as tests call it: one argument record and one
// call that reaches the blocking, nonblocking or persistent form, int or large-count, of any
// operation. Generated from the same list the library's wrappers come from.
#pragma once
#include <mpi.h>

#include "tests/mpi/count_forms.h"
#include "tests/mpi/entry_points.h"

namespace mcrp_test {

enum class P2POp {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) Name,
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
};
const char* p2p_op_name(P2POp op);       // "Send", ...
bool has_persistent_form(P2POp op);       // MPI_<Name>_init exists

// All arguments of any point-to-point operation (names as in pmpi/p2p.def). Send-like operations
// use sendbuf, count, datatype, dest, tag; Recv recvbuf, count, datatype, source, tag; Sendrecv
// the send*/recv* fields; Sendrecv_replace recvbuf, count, datatype, dest, sendtag, source, recvtag.
struct P2PArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_INT;
  int dest = MPI_PROC_NULL;
  int source = MPI_PROC_NULL;
  int tag = 0;
  MPI_Count sendcount = 0;
  MPI_Datatype sendtype = MPI_INT;
  int sendtag = 0;
  MPI_Count recvcount = 0;
  MPI_Datatype recvtype = MPI_INT;
  int recvtag = 0;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Message* message = nullptr;
};

// A started operation: a request to complete (nonblocking and persistent forms), and whether it is
// a persistent one to free afterwards. Blocking forms are done when start_p2p returns.
struct Started {
  MPI_Request request = MPI_REQUEST_NULL;
  bool persistent = false;
  int rc = MPI_SUCCESS;
};

// Calls the entry point. Blocking forms write `status` (receives); the others return a request in
// Started (persistent: created and started once).
Started start_p2p(P2POp op, CallForm form, CountForm counts, const P2PArgs& args, MPI_Status* status);

// Waits for a Started operation (and frees a persistent request); returns the first error.
int finish_p2p(Started& started, MPI_Status* status);

}  // namespace mcrp_test
