// Combining one rank's measurement with the others': OSU reports the mean over ranks of each rank's
// mean, with the smallest and largest beside it under -f.
#pragma once
#include <mpi.h>

namespace osu {

struct Spread {
  double avg, min, max;
};

// Collective over comm; the result is meaningful on every rank.
Spread spread(double mine, MPI_Comm comm);

// True on every rank when `mine` is true on all of them.
bool all_true(bool mine, MPI_Comm comm);

}  // namespace osu
