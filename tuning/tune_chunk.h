// The staged-chunk part of mcrpmpi-tune (the table's staged_chunk_bytes; docs/tuning.md). It runs
// before the collectives, whose staged path is then timed with the chunk the table will carry.
//
// What it times: each collective of -c whose staged path is pipelined (allreduce, reduce, bcast,
// allgather, reduce_scatter_block; as the collectives part calls them, forced onto the base-MPI path, so
// on a base MPI that is not CUDA-aware the pipelined staged path) on the world, at the sizes and chunks
// of staged_chunk.h (chunk_probe_sizes, chunk_candidates; the library's mcrpmpi_force_staged_chunk_bytes,
// called alike on every rank between two calls). Every point is timed in each of --rounds rounds, the
// chunks' order turning from round to round, and keeps its median.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tuning/measurements.h"
#include "tuning/tune_memory.h"
#include "tuning/tune_run.h"

namespace mcrp::tuning {

// Collective over `world`. Returns the rows, the same on every rank (each point's time is agreed on
// the slowest rank's), and nothing at all after saying on rank 0 why it was skipped: one rank, no
// pipelined collective in -c, no library hooks, no size at or above 256 KiB within the options, or not
// enough device memory.
std::vector<ChunkMeasurement> measure_staged_chunk(MPI_Comm world, const TuneOptions& options, DeviceMemory memory);

// Collective over `world`: forces on every rank the chunks that rank 0 chooses from `rows` as the table
// will (choose_staged_chunks against the built-in chunk, with `margin`), every collective's and the
// collectives' own, for the rest of the run; nothing where `rows` allow no choice.
void use_chosen_chunk(MPI_Comm world, const std::vector<ChunkMeasurement>& rows, double margin);

}  // namespace mcrp::tuning
