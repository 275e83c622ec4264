// time_pair (tuning/paired_timing.h): one round where the paths are far apart, medians of several
// alternating rounds where they are close, and a failed round.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tuning/paired_timing.h"

namespace mcrp::tuning {
namespace {

// Plays back scripted times per path and records the order in which the paths were timed.
class Script {
 public:
  Script(std::vector<double> path0, std::vector<double> path1) : times_{std::move(path0), std::move(path1)} {}
  double operator()(int path) {
    order.push_back(path);
    return times_[path].at(next_[path]++);
  }
  std::vector<int> order;

 private:
  std::vector<double> times_[2];
  std::size_t next_[2] = {0, 0};
};

PairTiming play(Script& script, RepeatRule rule = {}) {
  return time_pair([&script](int path) { return script(path); }, rule);
}

TEST(PairedTiming, FarApartPathsAreTimedOnce) {
  Script script({100}, {40});  // 2.5x: no repeat
  const PairTiming t = play(script);
  EXPECT_EQ(t.rounds, 1);
  EXPECT_DOUBLE_EQ(t.latency_us[0], 100);
  EXPECT_DOUBLE_EQ(t.latency_us[1], 40);
  EXPECT_EQ(script.order, (std::vector<int>{0, 1}));
}

TEST(PairedTiming, ClosePathsKeepTheMedianOfAlternatingRounds) {
  // The first round's outlier (1678 against 1894) would pick path 1; the medians pick path 0.
  Script script({1894, 1755, 1760}, {1678, 2049, 2040});
  const PairTiming t = play(script);
  EXPECT_EQ(t.rounds, 3);
  EXPECT_DOUBLE_EQ(t.latency_us[0], 1760);
  EXPECT_DOUBLE_EQ(t.latency_us[1], 2040);
  EXPECT_EQ(script.order, (std::vector<int>{0, 1, 1, 0, 0, 1}));
}

TEST(PairedTiming, TheCloseBoundIsInclusive) {
  Script at({125, 124, 126}, {100, 101, 99}), past({125.1}, {100});
  EXPECT_EQ(play(at).rounds, 3);  // exactly 1.25x: close
  EXPECT_EQ(play(past).rounds, 1);
}

TEST(PairedTiming, AnEvenNumberOfRoundsAveragesTheMiddleTwo) {
  Script script({10, 12, 30, 11}, {10, 10, 10, 10});
  const PairTiming t = play(script, RepeatRule{4, 0.25});
  EXPECT_EQ(t.rounds, 4);
  EXPECT_DOUBLE_EQ(t.latency_us[0], 11.5);
  EXPECT_DOUBLE_EQ(t.latency_us[1], 10);
}

TEST(PairedTiming, OneRoundWhenRepeatsAreOff) {
  Script script({100}, {101});
  EXPECT_EQ(play(script, RepeatRule{1, 0.25}).rounds, 1);
  Script zero({100}, {101});
  EXPECT_EQ(play(zero, RepeatRule{0, 0.25}).rounds, 1);  // fewer than one: one
}

TEST(PairedTiming, AFailedRoundEndsTheTimingAndTheOtherPathKeepsItsTimes) {
  Script first({-1}, {50});  // path 0 fails in the first round: path 1 is still timed, once
  PairTiming t = play(first);
  EXPECT_EQ(t.rounds, 1);
  EXPECT_LT(t.latency_us[0], 0);
  EXPECT_DOUBLE_EQ(t.latency_us[1], 50);
  EXPECT_EQ(first.order, (std::vector<int>{0, 1}));

  Script later({100, 101}, {100, -1});  // close, then path 1 fails in the second round (timed first)
  t = play(later);
  EXPECT_EQ(t.rounds, 2);
  EXPECT_DOUBLE_EQ(t.latency_us[0], 100.5);
  EXPECT_LT(t.latency_us[1], 0);
  EXPECT_EQ(later.order, (std::vector<int>{0, 1, 1, 0}));
}

TEST(PairedTiming, MedianOf) {
  EXPECT_DOUBLE_EQ(median_of({3}), 3);
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace mcrp::tuning
