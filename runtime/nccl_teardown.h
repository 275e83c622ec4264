// When NCCL communicators are destroyed. ncclCommDestroy frees NCCL's host and device memory, and
// CUDA's frees synchronize the whole device while holding the context's lock: they wait for every
// kernel in flight, including the NCCL kernels of the process's other communicators, and meanwhile no
// thread of the process can launch. An NCCL kernel that waits for a peer whose matching launch is
// stuck behind that peer's own teardown never ends: both ranks hang. Seen on the H100
// (gpu.thread_stress: 8 threads, each freeing a duplicated communicator while the others ran
// collectives). One thread can do the same: MPI_Iallreduce, MPI_Comm_free of another
// communicator, then a host message the peer needs before it joins the MPI_Iallreduce.
//
// So a released communicator is destroyed only at a moment the process has no NCCL work in flight
// (as are the staging pool's frees and pinned allocations, which may do the same),
// holding the launch lock so that none can start: at once when there is none (the usual case of a
// program that waits for its calls), else it is retired until such a moment (the start of a later
// NCCL-routed call, or a progress poll). MPI_Finalize tears down what is left.
#pragma once
#include <nccl.h>

#include <functional>

namespace mcrp {

// Runs `work` if no NCCL work of the process is in flight, holding the NCCL launch lock so that none
// starts meanwhile, and answers whether it ran: the moment for whatever synchronizes the device
// (ncclCommDestroy's frees, the staging pool's cudaFree, cudaFreeHost and cudaMallocHost). Installed
// as the device layer's gate (device/quiet_work.h) when NCCL is loaded.
bool run_if_nccl_quiet(const std::function<void()>& work);

// Takes over a released NCCL communicator: `abort` (after a failure, or never set up) aborts it;
// otherwise it is finalized and destroyed once nothing is in flight.
void retire_nccl_handle(ncclComm_t handle, int device, bool abort);

// Destroys what was retired if no NCCL work of the process is in flight; one atomic load when
// nothing waits. From ~NcclComm, the start of every NCCL-routed call (nccl_comm_for), every
// progress poll (advance_nccl_comms) and MPI_Session_finalize.
void tear_down_retired_when_quiet();

// MPI_Finalize: keeps MPI and the library progressing until nothing is in flight (at most
// MCRPMPI_NCCL_TIMEOUT, then what is left is aborted), and tears every retired communicator down.
void tear_down_all_retired();

}  // namespace mcrp

// How many retired communicators wait for a quiet moment; for tests (found with dlsym:
// tests/mpi/test_memory_flat.cpp).
extern "C" __attribute__((visibility("default"))) int mcrpmpi_retired_nccl_comms();
