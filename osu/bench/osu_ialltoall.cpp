// osu_ialltoall: MPI_Ialltoall with compute overlap, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "All-to-All", osu::Shape::all_to_all,
    nullptr,
    [](const osu::CallArgs& a) {
      MPI_Request r;
      MPI_Ialltoall(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm, &r);
      return r;
    }};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
