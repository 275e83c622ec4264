// osu_reduce_scatter_block: MPI_Reduce_scatter_block (MPI_SUM), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Reduce_scatter_block", osu::Shape::reduce_scatter,
    [](const osu::CallArgs& a) { MPI_Reduce_scatter_block(a.send, a.recv, a.count, a.type, MPI_SUM, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
