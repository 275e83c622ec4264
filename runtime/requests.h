// Library operations as real MPI_Request handles. Each in-flight operation (a device collective, a
// staged or NCCL point-to-point transfer) is an AsyncOp wrapped in an MPICH generalized request
// (MPIX_Grequest_start) whose poll function advances it; so MPI_Wait/Test and the whole Wait/Test
// family drive it, in one array with the base MPI's own requests, while the base MPI keeps
// progressing. The op owns every scratch and host buffer until it completes, and releases them
// before the request is marked complete.
//
// MPI_Request_free on an active request (legal for point-to-point) leaves the op to the library,
// which finishes it from its own progress (every poll and wait of the library), then completes and
// drops the request; MPI_Finalize (or a Sessions-only program's last MPI_Session_finalize) finishes
// what is left (finish_freed_requests), since a program may make only host calls after the free,
// which advance nothing of the library. MPI_Cancel reaches the op, which may withdraw (a receive
// not yet matched).
#pragma once
#include <mpi.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "device/status.h"

namespace mcrp {

// How an entry point completes, for the routers of collectives and point-to-point.
enum class Mode {
  blocking,     // the base call is the blocking entry point
  nonblocking,  // the base call is the nonblocking one, writing the request it is given
};

class AsyncOp {
 public:
  virtual ~AsyncOp() = default;
  // Advances the operation without blocking; sets *done once nothing of it remains in flight.
  virtual Status progress(bool* done) = 0;
  // The status Wait/Test report once done: source, tag, count and the cancelled flag (the error
  // field is the library's). The default is a collective's: no source, tag or count.
  virtual void fill_status(MPI_Status* status) const;
  // MPI_Cancel: withdraw if still possible; the op then completes through progress() either way,
  // reporting cancelled in its status when it was withdrawn. The default does nothing (collectives
  // cannot be cancelled; MPI allows cancel to have no effect).
  virtual void cancel() {}
  // After progress() failed: whether device work the op queued may still run, so that the blocks it
  // held must not be reused (device::note_abandoned_work). The default assumes so; an op whose
  // failure comes after all its device work (MPI_ERR_TRUNCATE) says no, and its blocks stay pooled.
  virtual bool left_device_work() const { return true; }
};

// Wraps a started op into *request. `call` ("MPI_Isend") and `comm` are what an error names and
// where it is raised. `datatypes` (the call's) are held until the op has finished
// (runtime/handle_holds.h): an op may pack or unpack with them after the call has returned, when
// the program may have freed them. On failure *request is MPI_REQUEST_NULL and the op is dropped.
Status start_generalized(std::unique_ptr<AsyncOp> op, MPI_Comm comm, const char* call,
                         std::initializer_list<MPI_Datatype> datatypes, MPI_Request* request);

// A request that is already complete: for device calls that ran to completion when issued.
Status start_completed(MPI_Request* request);

// MPICH 4.0.2 reports a failed library request that MPI_Waitall, MPI_Testall, MPI_Waitsome or
// MPI_Testsome completes with a new code of class MPI_ERR_OTHER in its status (it wraps what the
// query callback returns), not with the request's own error (MPI_ERR_TRUNCATE, say); MPI_Wait,
// MPI_Test, MPI_Waitany and MPI_Testany return the right one. So each failure is kept for the
// thread whose call completes the request, and the Wait/Test family puts it back
// (runtime/wait_family.cpp). Whether such a failure can be in a call starting now: whether MPI
// holds any library request (one may fail during the call, or have failed unreported). One atomic
// load; false in host-only programs.
bool library_failure_possible();
// Forgets the failures this thread's earlier calls completed; called before a base Wait/Test call.
void forget_completed_failures();
// The error library request `handle` failed with, if the base MPI completed it in this thread since
// forget_completed_failures(); MPI_SUCCESS otherwise.
int completed_failure(MPI_Request handle);

// Advances every request whose op is in flight, those the application freed while active included
// (one atomic load when there are none).
void advance_live_requests();
// How many requests have an op in flight (or finished since the last advance_live_requests): ops
// whose next step (a staged copy's base-MPI transfer, a launch queued behind an NCCL
// communicator's setup) may be what a peer waits for, and which only this process's library
// progress takes. One atomic load.
int live_request_count();
// Those requests by MPI call, for the timeout report: "3 (MPI_Iallreduce 2, MPI_Ibcast 1)", or "none".
std::string describe_live_requests();

// MPI_Request_free of `handle`, before the base MPI's: a library op still in flight behind it is
// marked freed. MPICH 4.0.2 calls the generalized request's free function at once and so marks it
// too; the mpich 5 wheel and Intel MPI call it only once the request has completed, which left such
// an op unmarked, unfinished by finish_freed_requests (a Sessions-only program's freed device
// receive then never delivered). One atomic load when no op is in flight.
void note_freed(MPI_Request handle);

// Advances the library until every op whose request the application freed while active has
// finished: for MPI_Finalize (and the last MPI_Session_finalize of a Sessions-only program), after
// which nothing could deliver them. Blocks as long as a peer does not do its part (as an active send
// or receive would in the base MPI).
void finish_freed_requests();

// Advances the library until every op started on `comm` has finished, those freed while active
// included: for MPI_Comm_disconnect, which waits for them (MPI 4.1, 12.10.4), and after which the
// communicator, its NCCL communicator and its protocol engine are gone.
void finish_requests_on(MPI_Comm comm);

}  // namespace mcrp
