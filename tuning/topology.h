// The topology class of a communicator, the key tuning rules are specialised by besides size:
// all ranks on one node (NVLink/PCIe/shared memory) behave very differently from ranks on several.
#pragma once
#include <mpi.h>

#include "tuning/decision.h"

namespace mcrp::tuning {

// Collective over `comm`: single_node when every rank shares one node (MPI_COMM_TYPE_SHARED, which
// MPICH decides from the host), multi_node otherwise; `any` if an MPI call fails. Costs a split and
// an allreduce: compute it once per communicator (e.g. when its NCCL communicator is created) and
// keep it in Query::topology.
MCRPMPI_TUNING_API Topology classify_topology(MPI_Comm comm);

}  // namespace mcrp::tuning
