// A communicator of this process alone, for the library's own use: probing for MPI progress, the
// placeholder requests of persistent operations, packing datatypes. Under the world model it is a
// duplicate of MPI_COMM_SELF. A program on MPI Sessions alone has no MPI_COMM_SELF (MPICH aborts
// the process on any use of it), so there it is made from the "mpi://SELF" process set of a session
// the library opens for itself beside the application's first one, and closed with the
// application's last one.
#pragma once
#include <mpi.h>

namespace mcrp {

// Made at the first need; MPI_COMM_NULL while MPI is initialized in neither model.
MPI_Comm library_self_comm();

// The communicator the library probes to drive MPI progress while it waits: a duplicate of
// MPI_COMM_WORLD the MPI_Init wrappers make (world_model_opened), on which no message ever
// arrives, so that every probe runs the base MPI's progress. Not a duplicate of MPI_COMM_SELF:
// MPICH 4.0.2 (ch4:ucx) answers a probe of a one-process communicator without advancing its
// network module, so a message this rank sent before it waited, above the eager size, never left
// while it waited (a peer waiting for that message before joining the library's collective: a
// hang; 4,000 bytes went, 12,000 did not; test_progress_while_waiting). Not MPI_COMM_WORLD itself either,
// but for a program whose MPI_Init the library did not see: a probe that finds a message there
// returns without running progress. In a Sessions-only program none: MPICH 4.0.2
// sets up its network module at the first communicator of several processes, and any progress
// before that (a one-process job) crashes inside UCX, so a probe of the library's own would crash
// programs that never ask for progress themselves.
MPI_Comm progress_probe_comm();

// The MPI_Session_init and MPI_Session_finalize wrappers call these around the base MPI.
void session_opened();
void session_closing();  // before the base MPI finalizes the application's session
// Whether the session about to be finalized is the application's last and the application's world
// model is not open (never initialized, or finalized already): after it nothing of MPI remains to
// advance the library's operations.
bool last_session_closing();

// After the application's MPI_Init(_thread), on every rank: makes the progress communicator.
void world_model_opened();
// At MPI_Finalize, before the base MPI's: the application's world model counts as closed, and the
// duplicates of MPI_COMM_WORLD and MPI_COMM_SELF go (sessions still open get a communicator of
// their own at the next need).
void release_world_self_comm();

}  // namespace mcrp
