// The point-to-point benchmarks between ranks 0 and 1 (other ranks wait at the final barrier, so the
// suite runs unchanged on any rank count): ping-pong latency, and streaming bandwidth one way or both;
// and the many-pairs latency, where rank i and rank i + n/2 ping-pong at the same time for every i.
#pragma once

namespace osu {

enum class PointToPoint {
  latency,        // osu_latency: half the round trip of a ping-pong
  bandwidth,      // osu_bw: a window of sends from rank 0, one acknowledgement from rank 1
  bidirectional,  // osu_bibw: both ranks send a window at once
  multi_latency,  // osu_multi_lat: every pair (i, i + n/2) ping-pongs at once; the mean over pairs
};

int run_point_to_point(int argc, char** argv, PointToPoint kind);

}  // namespace osu
