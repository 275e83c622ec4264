// What the shared runtime does when MPI starts and stops (collectives/ and p2p/ have their own
// steps, which pmpi/lifecycle.cpp runs first at finalization).
#pragma once

namespace mcrp {

// After PMPI_Init(_thread): read settings and tuning, select a device if asked (MCRPMPI_SELECT_DEVICE).
void on_initialized();
// After a successful PMPI_Session_init: names the base MPI (MCRPMPI_SHOW_BASE_MPI) in a program that
// has not called MPI_Init.
void on_session_initialized();
// Before PMPI_Finalize: print the profile (MCRPMPI_PROFILE), release NCCL communicators, the progress communicator and cached buffers.
void before_finalize();

}  // namespace mcrp
