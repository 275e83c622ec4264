// Choosing a GPU for a rank: among the GPUs whose PCI locality overlaps the CPUs this process is
// bound to (read with hwloc), take the local rank's turn; with no binding or no match, take the local
// rank modulo the number of GPUs. Used by the benchmarks and tests, and by MPI_Init when
// MCRPMPI_SELECT_DEVICE=1 (applications usually choose their device themselves).
#pragma once

namespace mcrp::device {

// Returns the chosen CUDA ordinal, or -1 when no GPU is present.
int nearest_gpu(int local_rank);

}  // namespace mcrp::device
