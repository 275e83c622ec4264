// What the library does when MPI starts and stops.
#pragma once

namespace mcrp {

// After PMPI_Init(_thread): read settings and tuning, select a device if asked (MCRPMPI_SELECT_DEVICE).
void on_initialized();
// Before PMPI_Finalize: print stats, release NCCL communicators, streams and cached buffers.
void before_finalize();

}  // namespace mcrp
