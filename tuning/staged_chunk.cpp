#include "tuning/staged_chunk.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace mcrp::tuning {
namespace {

constexpr std::uint64_t kSmallestProbe = 256 << 10;
constexpr std::uint64_t kLargestProbe = 32 << 20;
constexpr std::uint64_t kSmallestChunk = 64 << 10;
constexpr std::uint64_t kLargestChunk = 16 << 20;
constexpr std::size_t kProbeSizes = 3;

using Size = std::map<std::uint64_t, const ChunkMeasurement*>;  // by chunk setting, at one size

std::map<std::uint64_t, Size> by_size(const std::vector<ChunkMeasurement>& rows) {
  std::map<std::uint64_t, Size> sizes;
  for (const ChunkMeasurement& m : rows) sizes[m.bytes][effective_chunk(m.bytes, m.chunk_bytes)] = &m;
  return sizes;
}

const ChunkMeasurement* row_for(const Size& size, std::uint64_t bytes, std::uint64_t chunk) {
  const auto found = size.find(effective_chunk(bytes, chunk));
  return found == size.end() ? nullptr : found->second;
}

double best_latency(const Size& size) {
  double best = size.begin()->second->latency_us;
  for (const auto& [chunk, row] : size) best = std::min(best, row->latency_us);
  return best;
}

// The geometric mean of `chunk`'s latency over the best at each size; nullopt where a size lacks it.
std::optional<double> score(const std::map<std::uint64_t, Size>& sizes, std::uint64_t chunk) {
  double log_sum = 0;
  for (const auto& [bytes, size] : sizes) {
    const ChunkMeasurement* row = row_for(size, bytes, chunk);
    if (row == nullptr) return std::nullopt;
    const double best = best_latency(size);
    log_sum += std::log(best > 0 ? row->latency_us / best : 1.0);
  }
  return std::exp(log_sum / static_cast<double>(sizes.size()));
}

}  // namespace

std::vector<std::uint64_t> chunk_probe_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::vector<std::uint64_t> measured;  // as the collectives are: min_bytes doubling
  for (std::uint64_t b = std::max<std::uint64_t>(min_bytes, 1); b <= std::min(max_bytes, kLargestProbe); b *= 2) {
    measured.push_back(b);
  }
  std::vector<std::uint64_t> sizes;
  for (auto it = measured.rbegin(); it != measured.rend() && *it >= kSmallestProbe && sizes.size() < kProbeSizes;
       ++it) {
    if (sizes.empty() || *it * 4 == sizes.back()) sizes.push_back(*it);
  }
  return sizes;
}

std::vector<std::uint64_t> chunk_candidates(std::uint64_t bytes) {
  std::vector<std::uint64_t> chunks{0};
  for (std::uint64_t chunk = kSmallestChunk; chunk <= kLargestChunk && chunk < bytes; chunk *= 2)
    chunks.push_back(chunk);
  return chunks;
}

std::uint64_t effective_chunk(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return chunk_bytes >= bytes ? 0 : chunk_bytes;
}

std::optional<std::uint64_t> choose_staged_chunk(const std::vector<ChunkMeasurement>& rows, std::uint64_t current,
                                                 double margin) {
  const std::map<std::uint64_t, Size> sizes = by_size(rows);
  if (sizes.empty()) return std::nullopt;
  std::set<std::uint64_t> candidates;
  for (const ChunkMeasurement& m : rows) candidates.insert(m.chunk_bytes);
  std::optional<std::uint64_t> winner;
  double winner_score = 0;
  for (std::uint64_t chunk : candidates) {  // ascending: of equal scores the smaller chunk wins
    const std::optional<double> s = score(sizes, chunk);
    if (s && (!winner || *s < winner_score)) winner = chunk, winner_score = *s;
  }
  const std::optional<double> kept = score(sizes, current);
  if (kept && (!winner || *kept <= winner_score * (1 + margin))) return current;
  return winner;
}

std::vector<ChunkMeasurement> rows_of(const std::vector<ChunkMeasurement>& rows, CollKind kind) {
  std::vector<ChunkMeasurement> picked;
  for (const ChunkMeasurement& m : rows) {
    if (m.kind == kind) picked.push_back(m);
  }
  return picked;
}

StagedChunkChoice choose_staged_chunks(const std::vector<ChunkMeasurement>& rows, std::uint64_t default_chunk,
                                       double margin) {
  StagedChunkChoice choice;
  choice.all = choose_staged_chunk(rows_of(rows, CollKind::allreduce), default_chunk, margin);
  const std::uint64_t all = choice.all.value_or(default_chunk);
  for (int k = 0; k < kCollKindCount; ++k) {
    const auto kind = static_cast<CollKind>(k);
    if (kind == CollKind::allreduce) continue;
    const std::optional<std::uint64_t> chosen = choose_staged_chunk(rows_of(rows, kind), all, margin);
    if (chosen && *chosen != all) choice.own[k] = chosen;
  }
  auto& uneven = choice.own[static_cast<int>(CollKind::reduce_scatter)];
  if (rows_of(rows, CollKind::reduce_scatter).empty())
    uneven = choice.own[static_cast<int>(CollKind::reduce_scatter_block)];
  return choice;
}

std::vector<ChunkQualityPoint> judge_staged_chunk(const std::vector<ChunkMeasurement>& rows, std::uint64_t chunk,
                                                  int* unmeasured) {
  std::vector<ChunkQualityPoint> points;
  for (const auto& [bytes, size] : by_size(rows)) {
    const ChunkMeasurement* row = row_for(size, bytes, chunk);
    if (row == nullptr) {
      ++*unmeasured;
      continue;
    }
    ChunkQualityPoint q;
    q.chosen = *row;
    q.best_us = best_latency(size);
    q.ratio = q.best_us > 0 ? row->latency_us / q.best_us : 1.0;
    points.push_back(q);
  }
  return points;
}

}  // namespace mcrp::tuning
