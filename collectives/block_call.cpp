#include "collectives/block_call.h"

namespace mcrp {

const char* mpi_name(BlockKind kind) {
  static const char* const names[] = {
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) "MPI_" #Name,
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
  };
  return names[static_cast<int>(kind)];
}

const char* nonblocking_mpi_name(BlockKind kind) {
  static const char* const names[] = {
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) "MPI_" #NonblockingName,
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
  };
  return names[static_cast<int>(kind)];
}

}  // namespace mcrp
