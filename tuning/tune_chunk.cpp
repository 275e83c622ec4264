#include "tuning/tune_chunk.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tuning/library_hooks.h"
#include "tuning/paired_timing.h"
#include "tuning/staged_chunk.h"
#include "tuning/table.h"
#include "tuning/topology.h"

namespace mcrp::tuning {
namespace {

// Bytes one point moves at most (fewer iterations at large sizes than the collectives' 1 GiB: a
// point of this part is one of up to ten chunks at one size, timed in every round).
constexpr std::uint64_t kPointBudget = 256 << 20;

// No rows, after rank 0 said why.
std::vector<ChunkMeasurement> skipped(int rank, const char* why) {
  if (rank == 0) std::printf("staged chunk: skipped (%s)\n", why);
  return {};
}

// `moved`: the bytes of the largest buffer of one call.
int probe_iterations(std::uint64_t moved, const TuneOptions& options) {
  return iterations_for(moved, static_cast<int>(std::min<std::uint64_t>(options.iterations, kPointBudget / moved)));
}

std::string chunk_name(long long chunk) {
  return chunk == 0 ? "unpipelined" : human_bytes(static_cast<std::uint64_t>(chunk));
}

// Forces `kind` onto the base-MPI path and the chunk of every collective onto the given one for its
// lifetime.
class ForcedStagedCall {
 public:
  ForcedStagedCall(const LibraryHooks& hooks, CollKind kind) : hooks_(hooks), kind_(static_cast<int>(kind)) {
    hooks_.force_backend(kind_, static_cast<int>(Backend::mpi));
  }
  ~ForcedStagedCall() {
    hooks_.force_staged_chunk_bytes(-1);
    hooks_.force_backend(kind_, -1);
  }
  ForcedStagedCall(const ForcedStagedCall&) = delete;
  ForcedStagedCall& operator=(const ForcedStagedCall&) = delete;
  void chunk(std::uint64_t bytes) const { hooks_.force_staged_chunk_bytes(static_cast<long long>(bytes)); }

 private:
  const LibraryHooks& hooks_;
  int kind_;
};

// The collectives of -c whose staged path is pipelined, in -c's order.
std::vector<CollKind> pipelined_kinds(const TuneOptions& options) {
  std::vector<CollKind> kinds;
  for (CollKind kind : options.kinds) {
    if (has_staged_pipeline(kind)) kinds.push_back(kind);
  }
  return kinds;
}

// One collective's rows: every size and chunk in each round, the chunks' order turning from round to
// round, each point's median kept.
std::vector<ChunkMeasurement> measure_kind(CollKind kind, const std::vector<std::uint64_t>& sizes, DeviceBuffer& send,
                                           DeviceBuffer& recv, MPI_Comm world, const TuneOptions& options,
                                           DeviceMemory memory) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  const Topology topology = classify_topology(world);
  const ForcedStagedCall forced(library_hooks(), kind);
  const int rounds = std::max(1, options.repeat.rounds);
  const std::uint64_t blocks = needs_per_rank_blocks(kind) ? static_cast<std::uint64_t>(size) : 1;
  // samples[s][c]: the rounds' times of chunk c at size s; a failed round drops the point.
  std::vector<std::vector<std::vector<double>>> samples(sizes.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) samples[s].resize(chunk_candidates(sizes[s]).size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const std::vector<std::uint64_t> chunks = chunk_candidates(sizes[s]);
      const int iterations = probe_iterations(sizes[s] * blocks, options);
      for (std::size_t turn = 0; turn < chunks.size(); ++turn) {
        const std::size_t c = (turn + static_cast<std::size_t>(round)) % chunks.size();
        forced.chunk(chunks[c]);
        samples[s][c].push_back(time_collective(kind, send, recv, sizes[s], world, options.warmup, iterations, memory));
      }
    }
  }
  std::vector<ChunkMeasurement> rows;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::vector<std::uint64_t> chunks = chunk_candidates(sizes[s]);
    const int iterations = probe_iterations(sizes[s] * blocks, options);
    std::string line;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const std::vector<double>& times = samples[s][c];
      const bool failed = std::any_of(times.begin(), times.end(), [](double us) { return us < 0; });
      char point[64];
      if (failed) {
        std::snprintf(point, sizeof point, "%s failed", chunk_name(chunks[c]).c_str());
      } else {
        const double us = median_of(times);
        rows.push_back(ChunkMeasurement{size, topology, sizes[s], chunks[c], us, iterations, kind});
        report_row(options, rank, rows.back());
        std::snprintf(point, sizeof point, "%s %.1f us", chunk_name(chunks[c]).c_str(), us);
      }
      line += (c == 0 ? "" : ", ") + std::string(point);
    }
    if (rank == 0) {
      std::printf("[staged chunk %zu/%zu] staged %s, %d ranks, %s, %s: %s%s\n", s + 1, sizes.size(), kind_name(kind),
                  size, topology_name(topology), human_bytes(sizes[s]).c_str(), line.c_str(),
                  rounds > 1 ? (" (medians of " + std::to_string(rounds) + " rounds)").c_str() : "");
      std::fflush(stdout);
    }
  }
  return rows;
}

}  // namespace

std::vector<ChunkMeasurement> measure_staged_chunk(MPI_Comm world, const TuneOptions& options, DeviceMemory memory) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  const std::vector<std::uint64_t> sizes = chunk_probe_sizes(options.min_bytes, options.max_bytes);
  const std::vector<CollKind> kinds = pipelined_kinds(options);
  const LibraryHooks& hooks = library_hooks();
  if (size < 2) return skipped(rank, "one rank: the staged path is not pipelined there");
  if (kinds.empty()) return skipped(rank, "-c names no collective whose staged path is pipelined");
  if (sizes.empty()) return skipped(rank, "no measured size from 256 KiB up: raise --max-bytes");
  if (hooks.force_staged_chunk_bytes == nullptr || hooks.force_backend == nullptr) {
    return skipped(rank, "this libmcrpmpi cannot force the staged chunk");
  }
  // The gathering and scattering collectives need one block per rank on one side.
  const std::uint64_t largest = sizes.front() * static_cast<std::uint64_t>(size);
  DeviceBuffer send(memory, largest), recv(memory, largest);
  int ok = send.get() != nullptr && recv.get() != nullptr, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  if (!all_ok) return skipped(rank, "not enough device memory");
  std::vector<ChunkMeasurement> rows;
  for (CollKind kind : kinds) {
    const std::vector<ChunkMeasurement> measured = measure_kind(kind, sizes, send, recv, world, options, memory);
    rows.insert(rows.end(), measured.begin(), measured.end());
  }
  return rows;
}

void use_chosen_chunk(MPI_Comm world, const std::vector<ChunkMeasurement>& rows, double margin) {
  int rank = 0;
  PMPI_Comm_rank(world, &rank);
  // [0]: every collective's chunk; [1 + k]: collective k's own; -1 where none was chosen.
  std::vector<long long> chosen(1 + kCollKindCount, -1);
  if (rank == 0) {
    const StagedChunkChoice choice = choose_staged_chunks(rows, kDefaultStagedChunkBytes, margin);
    if (choice.all) chosen[0] = static_cast<long long>(*choice.all);
    for (int k = 0; k < kCollKindCount; ++k) {
      if (choice.own[k]) chosen[1 + k] = static_cast<long long>(*choice.own[k]);
    }
  }
  PMPI_Bcast(chosen.data(), static_cast<int>(chosen.size()), MPI_LONG_LONG, 0, world);
  const LibraryHooks& hooks = library_hooks();
  if (chosen[0] >= 0 && hooks.force_staged_chunk_bytes != nullptr) {
    hooks.force_staged_chunk_bytes(chosen[0]);
    if (rank == 0) std::printf("staged chunk: %s for the rest of the run\n", chunk_name(chosen[0]).c_str());
  }
  for (int k = 0; k < kCollKindCount; ++k) {
    if (chosen[1 + k] < 0 || hooks.force_own_staged_chunk_bytes == nullptr) continue;
    hooks.force_own_staged_chunk_bytes(k, chosen[1 + k]);
    if (rank == 0) {
      std::printf("staged chunk of %s: %s for the rest of the run\n", kind_name(static_cast<CollKind>(k)),
                  chunk_name(chosen[1 + k]).c_str());
    }
  }
}

}  // namespace mcrp::tuning
