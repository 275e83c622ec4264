// osu_bibw: bidirectional streaming bandwidth between ranks 0 and 1 (see osu/core/point_to_point.h).
#include "osu/core/point_to_point.h"

int main(int argc, char** argv) { return osu::run_point_to_point(argc, argv, osu::PointToPoint::bidirectional); }
