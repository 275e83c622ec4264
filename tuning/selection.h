// From measurements to thresholds, and back: choose per (collective, communicator size, topology)
// the message-size ranges where each path wins, and judge a table against the measurements.
#pragma once
#include <string>
#include <vector>

#include "tuning/eager_limit.h"
#include "tuning/measurements.h"
#include "tuning/staged_chunk.h"
#include "tuning/table.h"

namespace mcrp::tuning {

// Walking sizes upwards, the chosen path changes only when the other path is more than `margin`
// faster (0.05: 5 %), so near-ties do not make the table flip back and forth. The first size picks
// the faster path; a new range starts at the first size where the switch happens.
// Hence every measured point's chosen latency is within (1 + margin) of the best.
// The point-to-point rows set p2p_eager_limit_bytes (choose_eager_limit, with the same margin);
// without them, or when they allow no choice, it keeps its default. The chunk rows set
// staged_chunk_bytes and the collectives' own chunks the same way (choose_staged_chunks: the default
// kept unless another chunk is more than `margin` faster).
Table build_table(const std::vector<Measurement>& measurements, double margin,
                  const std::vector<EagerMeasurement>& p2p = {}, const std::vector<ChunkMeasurement>& chunks = {});

struct QualityPoint {
  Measurement chosen;     // the measurement of the path the table picks
  double best_us = 0;     // the fastest path's latency at that point
  double ratio = 1;       // chosen / best
};

struct QualityReport {
  std::vector<QualityPoint> points;
  std::vector<EagerQualityPoint> p2p_points;  // the table's eager limit against the p2p rows
  std::vector<ChunkQualityPoint> chunk_points;  // each collective's chunk in the table against its rows
  int unmeasured = 0;     // points where the table picks a path that was not measured there
  double worst = 1;       // the largest ratio of either kind of point (1 when there are no points)
};

QualityReport judge_table(const std::vector<Measurement>& measurements, const Table& table,
                          const std::vector<EagerMeasurement>& p2p = {},
                          const std::vector<ChunkMeasurement>& chunks = {});

// One line per point plus a summary naming the worst ratio and whether it meets `goal`.
std::string format_quality(const QualityReport& report, double goal);

}  // namespace mcrp::tuning
