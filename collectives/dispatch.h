// The single entry from pmpi/ for every collective: classify the buffers, choose the path, run it,
// report errors through the communicator's handler, record stats. With no GPU present and stats off
// it costs one branch before the base MPI call.
#pragma once
#include "collectives/base_call.h"
#include "collectives/call.h"

namespace mcrp {

int run_collective(const CollCall& call, const BaseCall& base);

}  // namespace mcrp
