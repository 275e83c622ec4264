#include "tuning/topology.h"

namespace mcrp::tuning {

Topology classify_topology(MPI_Comm comm) {
  int size = 0;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return Topology::any;
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
    return Topology::any;
  }
  int node_size = 0;
  PMPI_Comm_size(node, &node_size);
  PMPI_Comm_free(&node);
  // Every rank must agree: one rank seeing a smaller node makes the whole communicator multi-node.
  int all_local = node_size == size ? 1 : 0;
  int agreed = 0;
  if (PMPI_Allreduce(&all_local, &agreed, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return Topology::any;
  return agreed == 1 ? Topology::single_node : Topology::multi_node;
}

}  // namespace mcrp::tuning
