// The measuring half of mcrpmpi-tune: times every routed collective on device buffers under each
// forced path, on the world and on sub-communicators (one per node, powers of two), with progress
// on rank 0 (the eager limit of point-to-point: tune_p2p.h). Needs device memory on every rank (a
// CUDA device, or the library's fake device) and libmcrpmpi in the process.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuning/measurements.h"
#include "tuning/paired_timing.h"
#include "tuning/tune_memory.h"

namespace mcrp::tuning {

// The collectives the suite can time with equal per-rank blocks.
std::vector<CollKind> measurable_kinds();

struct TuneOptions {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 256ull << 20;
  int iterations = 20;          // at small sizes; fewer at large ones (see iterations_for)
  int warmup = 3;
  std::vector<CollKind> kinds = measurable_kinds();  // the collectives to measure (none: only p2p)
  bool p2p = true;              // measure the eager limit of device-only point-to-point (tune_p2p.h)
  bool staged_chunk = true;     // measure the staged path's chunk first (tune_chunk.h)
  bool sub_communicators = true;
  RepeatRule repeat;            // close points: medians of alternating rounds (paired_timing.h)
  // Called on world rank 0 with each measurement's CSV row as soon as it is measured: mcrpmpi-tune
  // appends it to the CSV, so that a run cut short keeps what it measured (--from-csv builds a table
  // from it). Empty: nothing.
  std::function<void(const std::string& csv_row)> on_row;
};

// Hands `row` to options.on_row on world rank 0.
template <typename Row>
void report_row(const TuneOptions& options, int world_rank, const Row& row) {
  if (world_rank == 0 && options.on_row) options.on_row(to_csv_row(row));
}

// True when the MPI entry points in use are libmcrpmpi's (linked or preloaded), so its paths can be forced.
bool libmcrpmpi_loaded();

// Collective over `world`; requires libmcrpmpi_loaded(). Returns the measurements (complete on rank 0, where they are reported).
std::vector<Measurement> run_measurements(MPI_Comm world, const TuneOptions& options, DeviceMemory memory);

// `iterations` calls of `kind` with per-rank blocks of `bytes` (see call_collective) after `warmup`
// untimed ones, collective over `comm`: the slowest rank's mean latency in microseconds, the same on
// every rank, negative if a call failed on any rank.
double time_collective(CollKind kind, DeviceBuffer& send, DeviceBuffer& recv, std::uint64_t bytes, MPI_Comm comm,
                       int warmup, int iterations, DeviceMemory memory);

// True for the collectives whose buffer on some rank holds one block of `bytes` per rank.
bool needs_per_rank_blocks(CollKind kind);

// Timed calls per point: `iterations` at small sizes, fewer for large messages (about 1 GiB moved
// per point), never fewer than 3.
int iterations_for(std::uint64_t bytes, int iterations);

// The sizes measured: max(min_bytes, 1), doubling, up to max_bytes.
std::vector<std::uint64_t> doubling_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);

// " (medians of N rounds)" for a point timed more than once, else empty: for the progress lines.
std::string rounds_note(const PairTiming& timing);

// "64 KiB", "3 B": exact where a power of 1024 divides.
std::string human_bytes(std::uint64_t bytes);

}  // namespace mcrp::tuning
