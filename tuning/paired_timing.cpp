#include "tuning/paired_timing.h"

#include <algorithm>

namespace mcrp::tuning {

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t mid = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

PairTiming time_pair(const std::function<double(int path)>& time_round, const RepeatRule& rule) {
  PairTiming timing;
  std::array<std::vector<double>, 2> samples;
  std::array<bool, 2> failed{false, false};
  const int rounds = std::max(rule.rounds, 1);
  for (int round = 0; round < rounds; ++round) {
    timing.rounds = round + 1;
    // Alternating the order, so that drift (a warming clock, another job) falls on both paths alike.
    for (int turn = 0; turn < 2; ++turn) {
      const int path = round % 2 == 0 ? turn : 1 - turn;
      const double us = time_round(path);
      if (us < 0) failed[path] = true;
      else samples[path].push_back(us);
    }
    if (failed[0] || failed[1]) break;
    if (round == 0) {  // far apart: the first round decides; close: every round runs
      const double faster = std::min(samples[0][0], samples[1][0]);
      const double slower = std::max(samples[0][0], samples[1][0]);
      if (slower > faster * (1 + rule.close)) break;
    }
  }
  for (int path = 0; path < 2; ++path) {
    if (!failed[path]) timing.latency_us[path] = median_of(samples[path]);
  }
  return timing;
}

}  // namespace mcrp::tuning
