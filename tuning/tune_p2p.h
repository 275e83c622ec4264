// The point-to-point half of mcrpmpi-tune: the eager limit of device-only communicators (docs/point-to-point.md,
// "Device-only communicators"). World ranks 0 and 1 ping-pong device buffers on two communicators of
// theirs asserted device-only (mpi_assert_memory_alloc_kinds = cuda:device), one made with every
// measured payload inline and one with every payload by rendezvous (the library's
// mcrpmpi_force_p2p_eager_limit, called alike on both); the other ranks wait at an allreduce per
// size. Not a duplicate of the world: its NCCL communicator (made lazily, by library progress on
// every member) would wait for the ranks that only wait. Progress on rank 0.
#pragma once
#include <mpi.h>

#include <vector>

#include "tuning/measurements.h"
#include "tuning/tune_memory.h"
#include "tuning/tune_run.h"

namespace mcrp::tuning {

// Collective over `world`. Sizes from --min-bytes doubling up to min(--max-bytes, 1 GiB), each
// protocol in turn at every size. Returns the rows on rank 0 (nothing elsewhere), and nothing at all
// after saying on rank 0 why it was skipped: one rank, no library hooks, or a duplicate that got no
// device-only engine (NCCL not usable on every rank; on the fake device MCRPMPI_P2P_CHANNEL=nccl).
std::vector<EagerMeasurement> measure_eager_limit(MPI_Comm world, const TuneOptions& options, DeviceMemory memory);

}  // namespace mcrp::tuning
