// The measuring half of mcrpmpi-tune: times every routed collective on device buffers under each
// forced path, on the world and on sub-communicators (one per node, powers of two), with progress
// on rank 0. Needs a CUDA device on every rank and libmcrpmpi in the process.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tuning/measurements.h"

namespace mcrp::tuning {

struct TuneOptions {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 256ull << 20;
  int iterations = 20;          // at small sizes; fewer at large ones (see iterations_for)
  int warmup = 3;
  std::vector<CollKind> kinds;  // empty: every collective measure_one() supports
  bool sub_communicators = true;
};

// The collectives the suite can time with equal per-rank blocks.
std::vector<CollKind> measurable_kinds();

// True when the MPI entry points in use are libmcrpmpi's (linked or preloaded), so its paths can be forced.
bool libmcrpmpi_loaded();

// Collective over `world`; requires libmcrpmpi_loaded(). Returns the measurements (complete on rank 0, where they are reported).
std::vector<Measurement> run_measurements(MPI_Comm world, const TuneOptions& options);

}  // namespace mcrp::tuning
