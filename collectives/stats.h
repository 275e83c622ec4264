// MCRPMPI_STATS=1: per collective and per path, calls, bytes and time, summed over ranks and printed
// by rank 0 at MPI_Finalize. Recording is lock-free (relaxed atomics), so threads do not contend.
// MCRPMPI_PROFILE=1 splits the same rows into steps (runtime/profile.h prints them).
#pragma once
#include <mpi.h>

#include <cstdint>

#include "collectives/kind.h"
#include "collectives/paths.h"

namespace mcrp::stats {

void record(CollKind kind, Path path, std::uint64_t bytes, double seconds);
// Collective over `world`; prints on its rank 0. Does nothing unless MCRPMPI_STATS is set.
void report(MPI_Comm world);

// Number of calls this rank recorded for (kind, path), for tests and the public query.
std::uint64_t local_calls(CollKind kind, Path path);

// MCRPMPI_PROFILE: the collective being timed on this thread is reported in (kind, path)'s row.
// Callers test profile::enabled() first.
void charge_profile(CollKind kind, Path path);

}  // namespace mcrp::stats
