// The tuning table's topology class of a communicator (one node or several), computed once per
// communicator -- it is collective -- and cached as an attribute.
#pragma once
#include <mpi.h>

#include "tuning/decision.h"

namespace mcrp {

// Collective over `comm` the first time; every rank of a device-buffer call reaches it together
// (the path decision is the same on all ranks), so the hidden split and allreduce match up.
tuning::Topology topology_of(MPI_Comm comm);

}  // namespace mcrp
