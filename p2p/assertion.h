// Communicators whose point-to-point traffic the application asserts is device memory only, and
// their protocol engines (p2p/engine.h). An application asserts it with the MPI 4.1 info key
// `mpi_assert_memory_alloc_kinds` set to `cuda:device` (MPI_Comm_set_info, MPI_Comm_dup_with_info),
// or for every communicator with MCRPMPI_P2P_DEVICE_ONLY=1 (MPI_COMM_WORLD at MPI_Init, and each
// intracommunicator made by MPI_Comm_dup, _split, _split_type, _create, _create_group, the
// topology constructors and MPI_Intercomm_merge: pmpi/comm_wrappers.cpp).
//
// The engine's channel comes from MCRPMPI_P2P_CHANNEL: `auto` (default) uses NCCL when every member
// can (the WORLD map) and otherwise leaves the communicator on the staged path; `nccl` and `mpi`
// force one (`mpi` moves payloads with the base MPI: for tests on the fake device, or a base MPI
// that takes device pointers). Rank 0's setting counts for every member of a communicator.
#pragma once
#include <mpi.h>

#include <memory>

namespace mcrp {

class Engine;

// True when `info` carries mpi_assert_memory_alloc_kinds = cuda:device.
bool info_asserts_device_only(MPI_Info info);

// Collective over `comm`: every rank passes whether it asserts; when all do, the communicator gets
// an engine (a no-op for intercommunicators, MPI_COMM_NULL, or when no channel can serve it).
void assert_device_only(MPI_Comm comm, bool asserted_here);

// MPI_Comm_get_info: a communicator whose assertion the library acts on (it has an engine) shows it
// in `info`, as MPI 4 asks of hints an implementation uses (MPICH 4.0.2 lists only its own).
int report_device_only_assertion(MPI_Comm comm, MPI_Info info);

// MCRPMPI_P2P_DEVICE_ONLY=1: every communicator is asserted.
bool device_only_everywhere();

// The engine of `comm`, or null; one atomic load while no communicator has one.
std::shared_ptr<Engine> engine_of(MPI_Comm comm);

// Whether any communicator ever got an engine (so any call may be the protocol's); one atomic load.
bool engines_exist();

// MPI_Finalize: every engine releases its private communicators.
void finish_p2p();

}  // namespace mcrp

// For mcrpmpi-tune, found with dlsym like mcrpmpi_force_backend: the eager limit in bytes of the
// engine of `comm`, or -1 when the communicator has none (not asserted, or no channel can serve it:
// then its point-to-point is staged and inline and rendezvous cannot be told apart).
extern "C" __attribute__((visibility("default"))) long long mcrpmpi_p2p_engine_eager_limit(MPI_Comm comm);
