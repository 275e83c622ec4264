// osu_scatter: MPI_Scatter from rank 0, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Scatter", osu::Shape::root_scatter,
    [](const osu::CallArgs& a) { MPI_Scatter(a.send, a.count, a.type, a.recv, a.count, a.type, a.root, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
