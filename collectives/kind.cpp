#include "collectives/kind.h"

#include <strings.h>

namespace mcrp {
namespace {

constexpr const char* kKindNames[] = {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) #kind,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};

constexpr const char* kMpiNames[] = {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) "MPI_" #Name,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};

constexpr const char* kNonblockingMpiNames[] = {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) "MPI_" #NonblockingName,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};

}  // namespace

const char* kind_name(CollKind kind) { return kKindNames[static_cast<int>(kind)]; }
const char* mpi_name(CollKind kind) { return kMpiNames[static_cast<int>(kind)]; }
const char* nonblocking_mpi_name(CollKind kind) { return kNonblockingMpiNames[static_cast<int>(kind)]; }

bool parse_kind(const char* text, CollKind* kind) {
  for (int i = 0; i < kCollKindCount; ++i) {
    if (strcasecmp(text, kKindNames[i]) == 0) {
      *kind = static_cast<CollKind>(i);
      return true;
    }
  }
  return false;
}

}  // namespace mcrp
