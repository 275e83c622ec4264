// osu_multi_lat: every pair (i, i + n/2) ping-pongs at once; mean latency over the pairs' ranks
// (see osu/core/point_to_point.h).
#include "osu/core/point_to_point.h"

int main(int argc, char** argv) { return osu::run_point_to_point(argc, argv, osu::PointToPoint::multi_latency); }
