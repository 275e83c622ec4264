// Which of two paths is faster at one point, from rounds of timed calls.
//
// One round each decides a point where the two paths are far apart. Where they are close, one
// round's noise can pick the wrong one, and the table then switches back and forth between
// neighbouring sizes: the lent H200's table of 2026-11-28 staged the allreduce between 4 and 8 MiB
// on one round's 1678 against 1894 us, where osu-compare's medians of three runs read 2049 against
// 1755 (tuning/examples/h200-mps-2ranks.*). So a point whose slower path is within `close` of the
// faster one is timed `rounds` times, the paths alternating which goes first, and each path keeps
// its median.
#pragma once

#include <array>
#include <functional>
#include <vector>

namespace mcrp::tuning {

struct RepeatRule {
  int rounds = 3;       // rounds at a close point; 1 times every point once
  double close = 0.25;  // close: the slower path at most (1 + close) times the faster
};

struct PairTiming {
  std::array<double, 2> latency_us{-1, -1};  // each path's median; negative when a round of it failed
  int rounds = 0;                            // rounds timed
};

// `time_round(path)` times one round of path 0 or 1 and returns microseconds, negative when the
// round failed. Every rank that calls this must get the same values from it (the suite's timers
// agree on the slowest rank's time, or rank 0's), so that every rank repeats alike. A failed round
// ends the timing after its round: that path is reported failed, the other with what it had.
PairTiming time_pair(const std::function<double(int path)>& time_round, const RepeatRule& rule);

// The median of `samples` (the mean of the middle two for an even count); `samples` non-empty.
double median_of(std::vector<double> samples);

}  // namespace mcrp::tuning
