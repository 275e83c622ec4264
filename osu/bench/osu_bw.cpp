// osu_bw: one-way streaming bandwidth from rank 0 to 1 (see osu/core/point_to_point.h).
#include "osu/core/point_to_point.h"

int main(int argc, char** argv) { return osu::run_point_to_point(argc, argv, osu::PointToPoint::bandwidth); }
