// Each NCCL operation as fake-communicator work (work.h): who sends what to whom, and what is computed
// locally once the bytes are in. Counts are elements of `type`; arguments are checked by the caller.
#pragma once
#include <nccl.h>

#include <cstddef>

#include "tests/fake_nccl/work.h"

namespace fake_nccl {

struct Place {
  int rank;
  int nranks;
};

Work all_reduce(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op);
Work reduce(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root);
Work reduce_scatter(Place at, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op);
Work broadcast(Place at, const void* send, void* recv, std::size_t bytes, int root);
Work all_gather(Place at, const void* send, void* recv, std::size_t bytes);
Work all_to_all(Place at, const void* send, void* recv, std::size_t bytes);
Work gather(Place at, const void* send, void* recv, std::size_t bytes, int root);
Work scatter(Place at, const void* send, void* recv, std::size_t bytes, int root);

}  // namespace fake_nccl
