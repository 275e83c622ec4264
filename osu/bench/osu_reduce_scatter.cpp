// osu_reduce_scatter: MPI_Reduce_scatter (equal blocks, MPI_SUM), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Reduce_scatter", osu::Shape::reduce_scatter,
    [](const osu::CallArgs& a) { MPI_Reduce_scatter(a.send, a.recv, a.counts, a.type, MPI_SUM, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
