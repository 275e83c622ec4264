// osu_iallreduce: MPI_Iallreduce (MPI_SUM) with compute overlap, timed the OSU way (see osu/core/collective.h).
#include "osu/core/collective.h"

namespace {
const osu::CollectiveSpec kSpec{
    "Allreduce", osu::Shape::all_reduce,
    nullptr,
    [](const osu::CallArgs& a) {
      MPI_Request r;
      MPI_Iallreduce(a.send, a.recv, a.count, a.type, MPI_SUM, a.comm, &r);
      return r;
    }};
}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
