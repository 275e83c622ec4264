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

}  // namespace mcrp
