// The raw-NCCL reference benchmark's collectives: each one an osu::CollectiveSpec whose call goes
// straight to NCCL on one communicator and stream (made by setup, freed by teardown), so the
// library's overhead is measured against the same timing, sizes and validation as the OSU programs.
#pragma once
#include <string>

#include "osu/core/collective.h"

namespace osu::nccl {

// The spec for -o NAME (allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather,
// scatter); nullptr when unknown.
const CollectiveSpec* find_collective(const std::string& name);

// "allreduce, reduce, ...", for messages.
const char* collective_names();

}  // namespace osu::nccl
