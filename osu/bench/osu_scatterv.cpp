// osu_scatterv: MPI_Scatterv from rank 0 (equal blocks), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Scatterv", osu::Shape::root_scatter,
    [](const osu::CallArgs& a) { MPI_Scatterv(a.send, a.counts, a.displs, a.type, a.recv, a.count, a.type, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
