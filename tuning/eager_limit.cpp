#include "tuning/eager_limit.h"

#include <algorithm>
#include <map>

namespace mcrp::tuning {
namespace {

// Both protocols' rows at one size; null where one was not measured.
struct SizePoint {
  const EagerMeasurement* row[2] = {nullptr, nullptr};
  bool complete() const { return row[0] != nullptr && row[1] != nullptr; }
  double latency(P2pProtocol p) const { return row[static_cast<int>(p)]->latency_us; }
};

std::map<std::uint64_t, SizePoint> by_size(const std::vector<EagerMeasurement>& rows) {
  std::map<std::uint64_t, SizePoint> sizes;
  for (const EagerMeasurement& m : rows) sizes[m.bytes].row[static_cast<int>(m.protocol)] = &m;
  return sizes;
}

}  // namespace

std::optional<std::uint64_t> choose_eager_limit(const std::vector<EagerMeasurement>& rows, double margin) {
  std::optional<std::uint64_t> limit;
  for (const auto& [bytes, point] : by_size(rows)) {
    if (!point.complete()) break;
    if (point.latency(P2pProtocol::inline_payload) > point.latency(P2pProtocol::rendezvous) * (1 + margin)) {
      if (!limit) limit = 0;
      break;
    }
    limit = bytes;
  }
  return limit;
}

std::vector<EagerQualityPoint> judge_eager_limit(const std::vector<EagerMeasurement>& rows, std::uint64_t limit,
                                                 int* unmeasured) {
  std::vector<EagerQualityPoint> points;
  for (const auto& [bytes, point] : by_size(rows)) {
    const P2pProtocol picked = bytes <= limit ? P2pProtocol::inline_payload : P2pProtocol::rendezvous;
    const EagerMeasurement* chosen = point.row[static_cast<int>(picked)];
    if (chosen == nullptr) {
      ++*unmeasured;
      continue;
    }
    EagerQualityPoint q;
    q.chosen = *chosen;
    q.best_us = point.complete() ? std::min(point.latency(P2pProtocol::inline_payload), point.latency(P2pProtocol::rendezvous))
                                 : chosen->latency_us;
    q.ratio = q.best_us > 0 ? chosen->latency_us / q.best_us : 1.0;
    points.push_back(q);
  }
  return points;
}

}  // namespace mcrp::tuning
