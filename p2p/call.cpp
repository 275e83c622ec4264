#include "p2p/call.h"

namespace mcrp {

const char* mpi_name(P2PKind kind) {
  static const char* const names[] = {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) "MPI_" #Name,
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
  };
  return names[static_cast<int>(kind)];
}

}  // namespace mcrp
