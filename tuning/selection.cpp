#include "tuning/selection.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

namespace mcrp::tuning {
namespace {

// The latencies of both paths at one measured point; absent where a path was not measured.
struct Point {
  std::optional<double> latency[2];
  const Measurement* row[2] = {nullptr, nullptr};
};

using GroupKey = std::tuple<int, int, int>;  // kind, comm_size, topology
using Group = std::map<std::uint64_t, Point>;  // by message size

std::map<GroupKey, Group> group(const std::vector<Measurement>& measurements) {
  std::map<GroupKey, Group> groups;
  for (const Measurement& m : measurements) {
    GroupKey key{static_cast<int>(m.kind), m.comm_size, static_cast<int>(m.topology)};
    Point& p = groups[key][m.bytes];
    const int b = static_cast<int>(m.backend);
    p.latency[b] = m.latency_us;
    p.row[b] = &m;
  }
  return groups;
}

Backend faster(const Point& p) {
  if (!p.latency[0]) return Backend::mpi;
  if (!p.latency[1]) return Backend::nccl;
  return *p.latency[1] < *p.latency[0] ? Backend::mpi : Backend::nccl;
}

std::vector<Range> choose_ranges(const Group& sizes, double margin) {
  std::vector<Range> ranges;
  for (const auto& [bytes, point] : sizes) {
    if (ranges.empty()) {
      ranges.push_back(Range{0, kUnknownSize, faster(point)});
      continue;
    }
    const int current = static_cast<int>(ranges.back().backend);
    const int other = 1 - current;
    const bool switch_over = !point.latency[current] ||
                             (point.latency[other] && *point.latency[current] > *point.latency[other] * (1 + margin));
    if (switch_over) {
      ranges.back().hi = bytes;
      ranges.push_back(Range{bytes, kUnknownSize, static_cast<Backend>(other)});
    }
  }
  return ranges;
}

}  // namespace

Table build_table(const std::vector<Measurement>& measurements, double margin,
                  const std::vector<EagerMeasurement>& p2p, const std::vector<ChunkMeasurement>& chunks) {
  Table table;
  table.source = Source::tuning_file;
  if (const std::optional<std::uint64_t> limit = choose_eager_limit(p2p, margin)) table.p2p_eager_limit_bytes = *limit;
  const StagedChunkChoice chunk = choose_staged_chunks(chunks, table.staged_chunk_bytes, margin);
  table.staged_chunk_bytes = chunk.all.value_or(table.staged_chunk_bytes);
  for (int k = 0; k < kCollKindCount; ++k) table.own_staged_chunk[k] = chunk.own[k].value_or(kNoOwnChunk);
  for (const auto& [key, sizes] : group(measurements)) {
    const auto [kind, comm_size, topology] = key;
    table.per_kind[kind].push_back(Rules{comm_size, static_cast<Topology>(topology), choose_ranges(sizes, margin)});
  }
  return table;
}

QualityReport judge_table(const std::vector<Measurement>& measurements, const Table& table,
                          const std::vector<EagerMeasurement>& p2p, const std::vector<ChunkMeasurement>& chunks) {
  QualityReport report;
  report.p2p_points = judge_eager_limit(p2p, table.p2p_eager_limit_bytes, &report.unmeasured);
  for (const EagerQualityPoint& q : report.p2p_points) report.worst = std::max(report.worst, q.ratio);
  for (int k = 0; k < kCollKindCount; ++k) {
    const auto kind = static_cast<CollKind>(k);
    for (const ChunkQualityPoint& q :
         judge_staged_chunk(rows_of(chunks, kind), table.staged_chunk_for(kind), &report.unmeasured)) {
      report.chunk_points.push_back(q);
      report.worst = std::max(report.worst, q.ratio);
    }
  }
  for (const auto& [key, sizes] : group(measurements)) {
    const auto [kind, comm_size, topology] = key;
    for (const auto& [bytes, point] : sizes) {
      Query query{static_cast<CollKind>(kind), bytes, comm_size, static_cast<Topology>(topology)};
      const int chosen = static_cast<int>(table.lookup(query).backend);
      if (!point.latency[chosen]) {
        ++report.unmeasured;
        continue;
      }
      QualityPoint q;
      q.chosen = *point.row[chosen];
      q.best_us = *point.latency[static_cast<int>(faster(point))];
      q.ratio = q.best_us > 0 ? *point.latency[chosen] / q.best_us : 1.0;
      if (q.ratio > report.worst) report.worst = q.ratio;
      report.points.push_back(q);
    }
  }
  return report;
}

std::string format_quality(const QualityReport& report, double goal) {
  std::string text;
  char line[256];
  std::string worst_point;  // what the summary names: "allreduce, 4 ranks, single_node, 8 B"
  double worst_ratio = -1;
  const auto add = [&](const char* what, int comm_size, Topology topology, std::uint64_t bytes, const char* path,
                       double chosen_us, double best_us, double ratio) {
    std::snprintf(
        line, sizeof line, "%-27s %6d ranks %-11s %12llu B  chosen %-10s %12.3f us  best %12.3f us  ratio %.3f\n", what,
        comm_size, topology_name(topology), static_cast<unsigned long long>(bytes), path, chosen_us, best_us, ratio);
    text += line;
    if (ratio <= worst_ratio) return;
    worst_ratio = ratio;
    std::snprintf(line, sizeof line, "%s, %d ranks, %s, %llu B", what, comm_size, topology_name(topology),
                  static_cast<unsigned long long>(bytes));
    worst_point = line;
  };
  for (const QualityPoint& q : report.points) {
    add(kind_name(q.chosen.kind), q.chosen.comm_size, q.chosen.topology, q.chosen.bytes, backend_name(q.chosen.backend),
        q.chosen.latency_us, q.best_us, q.ratio);
  }
  for (const EagerQualityPoint& q : report.p2p_points) {
    add("p2p eager limit", q.chosen.comm_size, q.chosen.topology, q.chosen.bytes, protocol_name(q.chosen.protocol),
        q.chosen.latency_us, q.best_us, q.ratio);
  }
  for (const ChunkQualityPoint& q : report.chunk_points) {
    const std::string chunk = q.chosen.chunk_bytes == 0 ? "unpipelined" : std::to_string(q.chosen.chunk_bytes);
    add(("staged " + std::string(kind_name(q.chosen.kind))).c_str(), q.chosen.comm_size, q.chosen.topology,
        q.chosen.bytes, chunk.c_str(), q.chosen.latency_us, q.best_us, q.ratio);
  }
  const std::size_t count = report.points.size() + report.p2p_points.size() + report.chunk_points.size();
  if (count == 0) {
    text += "no measured points\n";
    return text;
  }
  std::snprintf(line, sizeof line, "worst ratio %.3f (%s) over %zu points; goal <= %.2f: %s\n", report.worst,
                worst_point.c_str(), count, goal, report.worst <= goal ? "met" : "NOT met");
  text += line;
  if (report.unmeasured > 0) {
    text += std::to_string(report.unmeasured) + " points skipped: the table picks a path not measured there\n";
  }
  return text;
}

}  // namespace mcrp::tuning
