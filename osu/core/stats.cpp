#include "osu/core/stats.h"

namespace osu {

Spread spread(double mine, MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  Spread s{};
  MPI_Allreduce(&mine, &s.avg, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(&mine, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&mine, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
  s.avg /= ranks;
  return s;
}

bool all_true(bool mine, MPI_Comm comm) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm);
  return out != 0;
}

}  // namespace osu
