// Guarantee 2 (issue 3): nonblocking collectives on different communicators may be started in a
// different order on different ranks, and a rank may complete one before it starts another, as MPI
// allows. Shared by the host test (tests/mpi/test_cross_comm_order.cpp) and the device-buffer test
// (tests/gpu/test_nonblocking_gpu.cpp), which differ only in where the buffers live.
#pragma once
#include <mpi.h>

#include "tests/mpi/check.h"
#include "tests/mpi/memory_space.h"

namespace mcrp_test {

// Runs every reordering pattern on communicators derived from `world` with buffers of `n` floats
// in `space`, checking each result against a reference computed on the host.
void check_cross_comm_order(Checker& checker, MPI_Comm world, MemorySpace& space, int n);

}  // namespace mcrp_test
