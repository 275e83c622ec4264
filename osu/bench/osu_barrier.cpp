// osu_barrier: MPI_Barrier, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Barrier", osu::Shape::none,
    [](const osu::CallArgs& a) { MPI_Barrier(a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
