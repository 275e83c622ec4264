#include "collectives/stats.h"

#include <atomic>
#include <cstdio>

#include "runtime/config.h"
#include "runtime/profile.h"

namespace mcrp::stats {
namespace {

struct Counter {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> nanoseconds{0};
};

// Rows: the routed collectives by CollKind, then the block collectives by BlockKind.
constexpr int kKindRows = kCollKindCount + kBlockKindCount;
int row_of(CollKind kind) { return static_cast<int>(kind); }
int row_of(BlockKind kind) { return kCollKindCount + static_cast<int>(kind); }
const char* row_name(int row) {
  return row < kCollKindCount ? mpi_name(static_cast<CollKind>(row))
                              : mpi_name(static_cast<BlockKind>(row - kCollKindCount));
}

Counter g_counters[kKindRows][kPathCount];

// The profile's rows: the same (kind, path) cells, indexed kind row * kPathCount + path.
void name_profile_row(int row, const char** operation, const char** path) {
  *operation = row_name(row / kPathCount);
  *path = path_name(static_cast<Path>(row % kPathCount));
}

profile::RowBlock g_profile_rows(kKindRows * kPathCount, name_profile_row);

void record_row(int row, Path path, std::uint64_t bytes, double seconds) {
  Counter& c = g_counters[row][static_cast<int>(path)];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.bytes.fetch_add(bytes, std::memory_order_relaxed);
  c.nanoseconds.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

}  // namespace

void charge_profile(CollKind kind, Path path) {
  profile::charge(g_profile_rows, row_of(kind) * kPathCount + static_cast<int>(path));
}
void charge_profile(BlockKind kind, Path path) {
  profile::charge(g_profile_rows, row_of(kind) * kPathCount + static_cast<int>(path));
}

void record(CollKind kind, Path path, std::uint64_t bytes, double seconds) {
  record_row(row_of(kind), path, bytes, seconds);
}
void record(BlockKind kind, Path path, std::uint64_t bytes, double seconds) {
  record_row(row_of(kind), path, bytes, seconds);
}

std::uint64_t local_calls(CollKind kind, Path path) {
  return g_counters[row_of(kind)][static_cast<int>(path)].calls.load(std::memory_order_relaxed);
}

void report(MPI_Comm world) {
  if (!config().stats) return;
  constexpr int kCells = kKindRows * kPathCount * 3;
  unsigned long long local[kCells];
  unsigned long long total[kCells];
  int i = 0;
  for (auto& row : g_counters) {
    for (Counter& c : row) {
      local[i++] = c.calls.load();
      local[i++] = c.bytes.load();
      local[i++] = c.nanoseconds.load();
    }
  }
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  PMPI_Reduce(local, total, kCells, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, world);
  if (rank != 0) return;
  std::printf("# mcrpmpi stats (summed over %d ranks)\n", size);
  std::printf("# %-22s %-11s %12s %16s %14s\n", "collective", "path", "calls", "bytes", "time_s");
  for (int k = 0; k < kKindRows; ++k) {
    for (int p = 0; p < kPathCount; ++p) {
      const unsigned long long* cell = &total[(k * kPathCount + p) * 3];
      if (cell[0] == 0) continue;
      std::printf("  %-22s %-11s %12llu %16llu %14.6f\n", row_name(k),
                  path_name(static_cast<Path>(p)), cell[0], cell[1], static_cast<double>(cell[2]) * 1e-9);
    }
  }
  std::fflush(stdout);
}

}  // namespace mcrp::stats
