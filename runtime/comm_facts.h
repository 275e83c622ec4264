// What routing needs to know about a communicator besides the call: its topology class (one node or
// several) and whether every member can use NCCL. Computed once per communicator from the WORLD map
// (tuning/world_map.h), without communicating, and cached as an attribute.
#pragma once
#include <mpi.h>

#include "tuning/world_map.h"

namespace mcrp {

// Local, and the same on every rank of `comm`.
tuning::CommFacts comm_facts(MPI_Comm comm);

}  // namespace mcrp
