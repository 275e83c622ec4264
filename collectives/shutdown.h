// What the collectives do at MPI_Finalize, before the shared runtime releases its resources.
#pragma once

namespace mcrp {

// Prints the stats report (MCRPMPI_STATS) and frees the fp16 substitute type and ops.
void finish_collectives();

}  // namespace mcrp
