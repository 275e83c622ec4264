// osu_gatherv: MPI_Gatherv to rank 0 (equal blocks), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Gatherv", osu::Shape::root_gather,
    [](const osu::CallArgs& a) { MPI_Gatherv(a.send, a.count, a.type, a.recv, a.counts, a.displs, a.type, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
