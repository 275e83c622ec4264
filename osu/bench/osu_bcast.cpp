// osu_bcast: MPI_Bcast from rank 0, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Broadcast", osu::Shape::broadcast,
    [](const osu::CallArgs& a) { MPI_Bcast(a.recv, a.count, a.type, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
