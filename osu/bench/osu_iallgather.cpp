// osu_iallgather: MPI_Iallgather with compute overlap, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Allgather", osu::Shape::all_gather,
    nullptr,
    [](const osu::CallArgs& a) {
      MPI_Request r;
      MPI_Iallgather(a.send, a.count, a.type, a.recv, a.count, a.type, a.comm, &r);
      return r;
    }};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
