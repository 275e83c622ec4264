// From ping-pong measurements to the eager limit of device-only point-to-point (the table's
// p2p_eager_limit_bytes), and back: judge a limit against the measurements.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "tuning/measurements.h"

namespace mcrp::tuning {

// Walking the measured sizes upwards from the smallest, inline is kept while it is at most `margin`
// slower than rendezvous (0.05: 5 %); the limit is the last size kept, so inline is chosen over one
// contiguous range from the smallest size and the limit is always a measured size. 0 (every
// non-empty payload by rendezvous) when inline already loses at the smallest size. A size missing
// either protocol ends the walk. nullopt when not even the smallest size has both protocols
// (nothing to choose from: the table keeps its limit). Rows are one pair's; of two rows for one
// size and protocol the later counts.
std::optional<std::uint64_t> choose_eager_limit(const std::vector<EagerMeasurement>& rows, double margin);

struct EagerQualityPoint {
  EagerMeasurement chosen;  // the protocol `limit` picks at this size
  double best_us = 0;       // the faster protocol's latency there
  double ratio = 1;         // chosen / best
};

// One point per measured size where the protocol the limit picks (inline up to it) was measured;
// `unmeasured` counts the sizes where it was not.
std::vector<EagerQualityPoint> judge_eager_limit(const std::vector<EagerMeasurement>& rows, std::uint64_t limit,
                                                 int* unmeasured);

}  // namespace mcrp::tuning
