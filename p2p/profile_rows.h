// MCRPMPI_PROFILE rows of point-to-point (runtime/profile.h): one per operation and path.
#pragma once
#include <cstdint>

#include "p2p/call.h"

namespace mcrp {

enum class P2PPath : std::uint8_t {
  mpi,          // host buffers: the base MPI's call as it is
  staged,       // device buffers through pinned host images
  direct,       // device buffers handed to a CUDA-aware base MPI
  device_only,  // a communicator asserted device-only (p2p/engine.h)
};

// The call being timed on this thread is reported in (kind, path)'s row. Callers test
// profile::enabled() first.
void charge_profile(P2PKind kind, P2PPath path);

// Partitioned point-to-point (p2p/partitioned.h), in rows of their own: the init calls (their
// `start` form: the request's MPI_Start), each MPI_Pready form, MPI_Parrived. Paths mpi, staged
// and direct.
enum class PartitionedOp : std::uint8_t { psend_init, precv_init, pready, pready_range, pready_list, parrived };
void charge_profile(PartitionedOp op, P2PPath path);
const char* mpi_name(PartitionedOp op);  // "MPI_Pready_range", ...

}  // namespace mcrp
