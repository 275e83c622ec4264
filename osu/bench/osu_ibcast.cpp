// osu_ibcast: MPI_Ibcast from rank 0 with compute overlap, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Broadcast", osu::Shape::broadcast,
    nullptr,
    [](const osu::CallArgs& a) {
      MPI_Request r;
      MPI_Ibcast(a.recv, a.count, a.type, a.root, a.comm, &r);
      return r;
    }};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
