// osu_alltoall: MPI_Alltoall, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "All-to-All", osu::Shape::all_to_all,
    [](const osu::CallArgs& a) { MPI_Alltoall(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
