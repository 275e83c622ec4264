// What every MPI_COMM_WORLD process is (its node, whether it can use NCCL), learned once at MPI_Init,
// so that facts about any communicator of WORLD's processes are known without communicating on it.
// Communicating on first use would be a hidden collective: two ranks making their first device calls
// on two fresh communicators in opposite orders (legal for nonblocking calls) would each block in a
// collective the other has not reached.
#pragma once
#include <mpi.h>

#include "tuning/decision.h"

namespace mcrp::tuning {

struct CommFacts {
  Topology topology = Topology::any;  // single_node: all members on one node
  bool nccl_everywhere = false;       // every member can load NCCL and has a CUDA device
  bool cuda_everywhere = false;       // every member has a CUDA device (or the fake device)
};

// Collective over MPI_COMM_WORLD; call once, right after initialisation. `cuda_usable` and
// `nccl_usable` are this process's own answers. Returns this process's rank among the processes of
// its node (0 if MPI fails).
int learn_world_map(bool cuda_usable, bool nccl_usable);

// Local, and the same on every member of `comm` (an intracommunicator). A member that is not a WORLD
// process (spawned or connected), or a map never learned, gives topology `any` and no NCCL.
CommFacts facts_from_world_map(MPI_Comm comm);

}  // namespace mcrp::tuning
