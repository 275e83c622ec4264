// From timings of the staged path of the pipelined collectives at several chunk sizes to the chunks of
// the pipelined staged path (the table's staged_chunk_bytes and the collectives' own chunks), and
// back: judge a chunk against the timings.
//
// The sizes and chunks timed (tune_chunk.h): a chunk is worth its per-chunk cost (a copy call, an
// event and a base-MPI call, ~10-20 us on a GPU) only on messages of a few chunks, so up to three
// sizes -- the largest of --min-bytes doubling up to min(--max-bytes, 32 MiB), a quarter and a
// sixteenth of it, none below 256 KiB -- each unpipelined and cut into every power-of-two chunk from
// 64 KiB up to 16 MiB that leaves it at least two chunks.
//
// A chunk at least as large as a message leaves it one chunk, the same call as unpipelined, so at
// that size the chunk counts with the unpipelined row (chunk 0); the suite times each distinct call
// once (tune_chunk.h).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tuning/measurements.h"

namespace mcrp::tuning {

// The message sizes timed, largest first; empty when none is at least 256 KiB.
std::vector<std::uint64_t> chunk_probe_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);
// The chunks timed at `bytes`: 0 (unpipelined) first, then the powers of two, ascending.
std::vector<std::uint64_t> chunk_candidates(std::uint64_t bytes);

// The chunk setting a message of `bytes` is cut into, as timed: `chunk_bytes`, or 0 where that leaves
// one chunk (0 itself, or at least `bytes`).
std::uint64_t effective_chunk(std::uint64_t bytes, std::uint64_t chunk_bytes);

// Of one collective's rows: each chunk measured at every size (directly or through effective_chunk) gets a score: the
// geometric mean over the sizes of its latency over the best latency there (1: fastest everywhere). The chunk with the
// lowest score wins, except that `current` (the table's chunk) is kept unless the winner's score is more than `margin`
// lower (0.05: 5 %), so that noise does not move it. nullopt when no chunk was measured at every size (nothing to
// choose from). Rows are one communicator's; of two rows for one size and chunk the later counts.
std::optional<std::uint64_t> choose_staged_chunk(const std::vector<ChunkMeasurement>& rows, std::uint64_t current,
                                                 double margin);

// The rows of one collective.
std::vector<ChunkMeasurement> rows_of(const std::vector<ChunkMeasurement>& rows, CollKind kind);

// The chunks a table gets from rows of several collectives. The allreduce's rows choose the chunk of
// every collective (staged_chunk_bytes, against `default_chunk`); each other collective's rows then
// choose against that one, with the same margin, and a collective whose choice differs gets it as its
// own. The reduce_scatter_block's own chunk is also the reduce_scatter's when that has no rows: the
// suite times the even form of the one pipeline both run (collectives/pipeline_shape.h).
struct StagedChunkChoice {
  std::optional<std::uint64_t> all;  // nullopt: no allreduce rows, or none allow a choice
  std::array<std::optional<std::uint64_t>, kCollKindCount> own = {};
};
StagedChunkChoice choose_staged_chunks(const std::vector<ChunkMeasurement>& rows, std::uint64_t default_chunk,
                                       double margin);

struct ChunkQualityPoint {
  ChunkMeasurement chosen;  // the row `chunk` reads at this size
  double best_us = 0;       // the fastest chunk's latency there
  double ratio = 1;         // chosen / best
};

// Of one collective's rows: one point per measured size where `chunk` (through effective_chunk) was
// measured; `unmeasured` counts the sizes where it was not.
std::vector<ChunkQualityPoint> judge_staged_chunk(const std::vector<ChunkMeasurement>& rows, std::uint64_t chunk,
                                                  int* unmeasured);

}  // namespace mcrp::tuning
