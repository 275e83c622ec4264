// osu_allreduce: MPI_Allreduce (MPI_SUM), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Allreduce", osu::Shape::all_reduce,
    [](const osu::CallArgs& a) { MPI_Allreduce(a.send, a.recv, a.count, a.type, MPI_SUM, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
