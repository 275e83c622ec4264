// Whether this process is one where no call can need the library's routing: no CUDA (so no device
// buffer, no NCCL, no device-only communicator and no background work), and none of the settings
// that watch host calls (MCRPMPI_PROFILE, MCRPMPI_VERIFY, MCRPMPI_STATS). Then a host call goes
// straight to the base MPI after the library's own argument checks (counts from 2^24 up, and the
// collectives' MPI_IN_PLACE and vector-array checks).
//
// Inline with the answer kept in a static: one guard test and one load per call, where asking
// cuda_available() and config() each time was two out-of-line calls on every host call of a CPU
// program (tests/cost counts it). Settled at the first call; the settings are read once anyway.
#pragma once
#include "device/cuda_runtime.h"
#include "runtime/config.h"
#include "runtime/profile.h"

namespace mcrp {

inline bool host_only_process() {
  static const bool host_only = [] {
    const Config& settings = config();
    return !device::cuda_available() && !profile::enabled() && !settings.verify && !settings.stats;
  }();
  return host_only;
}

}  // namespace mcrp
