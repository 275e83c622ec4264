// osu_gather: MPI_Gather to rank 0, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Gather", osu::Shape::root_gather,
    [](const osu::CallArgs& a) { MPI_Gather(a.send, a.count, a.type, a.recv, a.count, a.type, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
