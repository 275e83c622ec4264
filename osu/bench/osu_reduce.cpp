// osu_reduce: MPI_Reduce (MPI_SUM to rank 0), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Reduce", osu::Shape::root_reduce,
    [](const osu::CallArgs& a) { MPI_Reduce(a.send, a.recv, a.count, a.type, MPI_SUM, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
