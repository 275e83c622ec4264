#include "collectives/comm_topology.h"

#include <cstdint>
#include <mutex>

#include "tuning/topology.h"

namespace mcrp {

tuning::Topology topology_of(MPI_Comm comm) {
  static int keyval = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  // Null copy callback: a duplicate may be used differently and recomputes its own.
  std::call_once(once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, nullptr); });
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &value, &found);
  if (found) return static_cast<tuning::Topology>(reinterpret_cast<std::intptr_t>(value));
  const tuning::Topology topology = tuning::classify_topology(comm);
  PMPI_Comm_set_attr(comm, keyval, reinterpret_cast<void*>(static_cast<std::intptr_t>(topology)));
  return topology;
}

}  // namespace mcrp
