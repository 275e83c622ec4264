// osu_allgather: MPI_Allgather, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Allgather", osu::Shape::all_gather,
    [](const osu::CallArgs& a) { MPI_Allgather(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
