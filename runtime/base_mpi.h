// Facts about the base MPI the library interposes on.
#pragma once

namespace mcrp {

// Whether the base MPI takes CUDA device pointers itself (MPIX_Query_cuda_support of the base
// MPI): then device buffers go to it directly, after the application's prior device work, instead
// of being staged. Looked up by name once: other MPICH-ABI libraries (Intel MPI) may not have the
// MPICH extension.
bool base_mpi_cuda_aware();

}  // namespace mcrp
