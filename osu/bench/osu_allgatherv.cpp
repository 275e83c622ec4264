// osu_allgatherv: MPI_Allgatherv (equal blocks), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Allgatherv", osu::Shape::all_gather,
    [](const osu::CallArgs& a) { MPI_Allgatherv(a.send, a.count, a.type, a.recv, a.counts, a.displs, a.type, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
