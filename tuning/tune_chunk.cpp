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

int probe_iterations(std::uint64_t bytes, const TuneOptions& options) {
  return iterations_for(bytes, static_cast<int>(std::min<std::uint64_t>(options.iterations, kPointBudget / bytes)));
}

std::string chunk_name(std::uint64_t chunk) { return chunk == 0 ? "unpipelined" : human_bytes(chunk); }

// Forces the allreduce onto the base-MPI path and the chunk onto the given one for its lifetime.
class ForcedStagedAllreduce {
 public:
  explicit ForcedStagedAllreduce(const LibraryHooks& hooks) : hooks_(hooks) {
    hooks_.force_backend(static_cast<int>(CollKind::allreduce), static_cast<int>(Backend::mpi));
  }
  ~ForcedStagedAllreduce() {
    hooks_.force_staged_chunk_bytes(-1);
    hooks_.force_backend(static_cast<int>(CollKind::allreduce), -1);
  }
  ForcedStagedAllreduce(const ForcedStagedAllreduce&) = delete;
  ForcedStagedAllreduce& operator=(const ForcedStagedAllreduce&) = delete;
  void chunk(std::uint64_t bytes) const { hooks_.force_staged_chunk_bytes(static_cast<long long>(bytes)); }

 private:
  const LibraryHooks& hooks_;
};

}  // namespace

std::vector<ChunkMeasurement> measure_staged_chunk(MPI_Comm world, const TuneOptions& options, DeviceMemory memory) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  const std::vector<std::uint64_t> sizes = chunk_probe_sizes(options.min_bytes, options.max_bytes);
  const LibraryHooks& hooks = library_hooks();
  if (size < 2) return skipped(rank, "one rank: the staged path is not pipelined there");
  if (sizes.empty()) return skipped(rank, "no measured size from 256 KiB up: raise --max-bytes");
  if (hooks.force_staged_chunk_bytes == nullptr || hooks.force_backend == nullptr) {
    return skipped(rank, "this libmcrpmpi cannot force the staged chunk");
  }
  DeviceBuffer send(memory, sizes.front()), recv(memory, sizes.front());
  int ok = send.get() != nullptr && recv.get() != nullptr, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  if (!all_ok) return skipped(rank, "not enough device memory");
  const Topology topology = classify_topology(world);
  const ForcedStagedAllreduce forced(hooks);
  const int rounds = std::max(1, options.repeat.rounds);
  // samples[s][c]: the rounds' times of chunk c at size s; a failed round drops the point.
  std::vector<std::vector<std::vector<double>>> samples(sizes.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) samples[s].resize(chunk_candidates(sizes[s]).size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const std::vector<std::uint64_t> chunks = chunk_candidates(sizes[s]);
      const int iterations = probe_iterations(sizes[s], options);
      for (std::size_t turn = 0; turn < chunks.size(); ++turn) {
        const std::size_t c = (turn + static_cast<std::size_t>(round)) % chunks.size();
        forced.chunk(chunks[c]);
        const double us =
            time_collective(CollKind::allreduce, send, recv, sizes[s], world, options.warmup, iterations, memory);
        samples[s][c].push_back(us);
      }
    }
  }
  std::vector<ChunkMeasurement> rows;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::vector<std::uint64_t> chunks = chunk_candidates(sizes[s]);
    const int iterations = probe_iterations(sizes[s], options);
    std::string line;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const std::vector<double>& times = samples[s][c];
      const bool failed = std::any_of(times.begin(), times.end(), [](double us) { return us < 0; });
      char point[64];
      if (failed) {
        std::snprintf(point, sizeof point, "%s failed", chunk_name(chunks[c]).c_str());
      } else {
        const double us = median_of(times);
        rows.push_back(ChunkMeasurement{size, topology, sizes[s], chunks[c], us, iterations});
        std::snprintf(point, sizeof point, "%s %.1f us", chunk_name(chunks[c]).c_str(), us);
      }
      line += (c == 0 ? "" : ", ") + std::string(point);
    }
    if (rank == 0) {
      std::printf("[staged chunk %zu/%zu] staged allreduce, %d ranks, %s, %s: %s%s\n", s + 1, sizes.size(), size,
                  topology_name(topology), human_bytes(sizes[s]).c_str(), line.c_str(),
                  rounds > 1 ? (" (medians of " + std::to_string(rounds) + " rounds)").c_str() : "");
      std::fflush(stdout);
    }
  }
  return rows;
}

void use_chosen_chunk(MPI_Comm world, const std::vector<ChunkMeasurement>& rows, double margin) {
  int rank = 0;
  PMPI_Comm_rank(world, &rank);
  long long chosen = -1;
  if (rank == 0) {
    if (const std::optional<std::uint64_t> chunk = choose_staged_chunk(rows, kDefaultStagedChunkBytes, margin)) {
      chosen = static_cast<long long>(*chunk);
    }
  }
  PMPI_Bcast(&chosen, 1, MPI_LONG_LONG, 0, world);
  const LibraryHooks& hooks = library_hooks();
  if (chosen < 0 || hooks.force_staged_chunk_bytes == nullptr) return;
  hooks.force_staged_chunk_bytes(chosen);
  if (rank == 0)
    std::printf("staged chunk: %s for the rest of the run\n", chunk_name(static_cast<std::uint64_t>(chosen)).c_str());
}

}  // namespace mcrp::tuning
