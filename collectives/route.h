// The routing decision, as a pure function of agreed facts plus the local memory type, so it can be
// unit-tested and so that every rank provably computes the same path for one call (rule 1).
#pragma once
#include <cstdint>

#include "collectives/kind.h"
#include "collectives/paths.h"
#include "tuning/decision.h"

namespace mcrp {

struct RouteInput {
  CollKind kind = CollKind::allreduce;
  bool device_memory = false;     // local: a significant buffer of this rank is device memory
  bool memory_disagrees = false;  // MCRPMPI_VERIFY found ranks with different memory types
  bool intercomm = false;
  int comm_size = 1;
  bool nccl_reducible = false;    // reductions: datatype and op map to NCCL
  bool predefined_op_on_derived_type = false;  // reductions: only the base MPI knows if the op is defined
  bool contiguous = true;         // local: both sides' datatypes are contiguous
  std::uint64_t agreed_bytes = 0; // tuning::kUnknownSize when ranks need not agree on one
  tuning::Topology topology = tuning::Topology::any;
  bool nccl_everywhere = true;    // every rank can load NCCL and has a device (tuning/world_map.h)
  bool base_takes_device_memory = false;  // the base MPI is CUDA-aware: `staged` becomes `direct`
};

struct Route {
  Path path = Path::mpi;
  const char* reason = "";
  bool by_table = false;  // query and decision below are meaningful
  tuning::Query query;
  tuning::Decision decision;
};

Route choose_route(const RouteInput& in);

}  // namespace mcrp
