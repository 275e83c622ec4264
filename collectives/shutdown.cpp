#include "collectives/shutdown.h"

#include <mpi.h>

#include "collectives/half_reduction.h"
#include "collectives/stats.h"

namespace mcrp {

void finish_collectives() {
  stats::report(MPI_COMM_WORLD);
  release_half_reduction();
}

}  // namespace mcrp
