// osu_alltoallv: MPI_Alltoallv (equal blocks), timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "All-to-Allv", osu::Shape::all_to_all,
    [](const osu::CallArgs& a) { MPI_Alltoallv(a.send, a.counts, a.displs, a.type, a.recv, a.counts, a.displs, a.type, a.comm); },
    nullptr};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
