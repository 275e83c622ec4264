// MCRPMPI_STATS=1: per collective and per path, calls, bytes and time, summed over ranks and printed
// by rank 0 at MPI_Finalize. Recording is lock-free (relaxed atomics), so threads do not contend.
// MCRPMPI_PROFILE=1 splits the same rows into steps (runtime/profile.h prints them).
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>

#include "collectives/block_call.h"
#include "collectives/kind.h"
#include "collectives/paths.h"

namespace mcrp::stats {

// A call's time, from a clock read at its start (only under MCRPMPI_STATS).
using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point started) {
  return std::chrono::duration<double>(Clock::now() - started).count();
}

// MPI_Alltoallw and the neighborhood collectives (collectives/block_dispatch.h) have rows of their
// own after the routed collectives', in the same tables (paths mpi and staged only).
void record(CollKind kind, Path path, std::uint64_t bytes, double seconds);
void record(BlockKind kind, Path path, std::uint64_t bytes, double seconds);
// Collective over `world`; prints on its rank 0. Does nothing unless MCRPMPI_STATS is set.
void report(MPI_Comm world);

// Number of calls this rank recorded for (kind, path), for tests and the public query.
std::uint64_t local_calls(CollKind kind, Path path);

// MCRPMPI_PROFILE: the collective being timed on this thread is reported in (kind, path)'s row.
// Callers test profile::enabled() first.
void charge_profile(CollKind kind, Path path);
void charge_profile(BlockKind kind, Path path);

}  // namespace mcrp::stats
