// The library's view of persistent collective requests.
//
// Device buffers: the handle the user gets is a real persistent request of the base MPI (an
// MPI_Barrier_init on the library's self communicator, runtime/self_comm.h, which completes as soon
// as it is started), so it can sit in any request array. A registry maps it to the collective:
// MPI_Start/Startall start the collective through the router as a nonblocking call (its inner
// request: a generalized one for NCCL and staged work, the base MPI's own otherwise) and then start
// the handle; the Wait/Test family (runtime/wait_family.h) treats the handle as incomplete while
// that inner request is, and MPI_Request_free drops the entry after finishing the inner request
// (collectives) or handing it to the library's freed-while-active requests (point-to-point).
//
// The same for persistent gather, allgather, scatter and in-place reduce_scatter on host buffers
// too: MPICH 4.0.2 and Intel MPI 2021 get those wrong (collectives/dispatch.cpp,
// base_persistent_unreliable).
//
// Other host buffers: the base MPI's own persistent request, registered too (without a collective) because
// MPICH 4.0.2's Waitany/Testany/Waitsome/Testsome report an inactive persistent collective request
// as completed, again and again, instead of ignoring it (Waitany then never reaches the others);
// the registry knows which are inactive, and the Wait/Test family hides those from the base MPI.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>

#include "device/status.h"
#include "runtime/handle_holds.h"

namespace mcrp {

// Starts one round of a library-owned persistent operation: its nonblocking form, whose request is
// written to *inner (MPI_REQUEST_NULL when it completed at once). Returns an MPI error code.
using PersistentStart = std::function<int(MPI_Request* inner)>;

// What MPI_Request_free of an active handle does with the operation behind it.
enum class FreeActive {
  finish,  // waits for it: freeing an active collective is erroneous in MPI, the library tolerates it
  detach,  // frees its inner request, which completes on its own (runtime/requests.h): MPI says
           // freeing an active point-to-point request is local, the transfer still completes
};

// What an operation keeps beside its handle for calls other than the Start, Wait/Test and free
// families: MPI_Pready and MPI_Parrived reach a partitioned request's transfer through it
// (p2p/partitioned.h). Goes with the handle's entry, at MPI_Request_free.
class PersistentAttachment {
 public:
  virtual ~PersistentAttachment() = default;
};

// Device buffers: creates the handle in *request and remembers how to start the operation, holding
// the communicator, datatypes and op its starts use until MPI_Request_free (runtime/handle_holds.h).
Status create_persistent(PersistentStart start, HandleHolds holds, MPI_Request* request,
                         FreeActive on_free = FreeActive::finish,
                         std::shared_ptr<PersistentAttachment> attachment = nullptr);
// The attachment of a registered handle, or null (one atomic load while no handle is registered).
std::shared_ptr<PersistentAttachment> persistent_attachment(MPI_Request handle);
// Host buffers: remembers a persistent collective request the base MPI made on `comm`.
void register_base_persistent(MPI_Request request, MPI_Comm comm);

// After MPI_Comm_disconnect of `comm` (MPI 4.1 allows inactive persistent requests on it, to be
// freed afterwards): a handle the library runs an operation behind drops its hold on `comm`, and
// MPI_Start of it then fails with MPI_ERR_REQUEST instead of reaching a communicator that is gone
// (or a new one given the same handle); MPI_Request_free of it still works. The base MPI's own
// requests on `comm` are forgotten: the base MPI frees them (MPICH since 4.1) and may reuse their
// handles.
void comm_disconnected(MPI_Comm comm);

// MPI_Start for any request: starts a registered collective first, then the handle.
int start_request(MPI_Request* request);
// MPI_Cancel for any request: for a handle the library runs an operation behind, cancels that
// operation's inner request (the handle is a barrier the base MPI cannot cancel); its status then
// says so once completed. Any other request goes to the base MPI.
int cancel_request(MPI_Request* request);
// MPI_Request_free for any request: finishes or detaches (FreeActive) and forgets a registered one,
// then frees the handle.
int free_request(MPI_Request* request);

// Whether the library tracks `handle` (one atomic load when it tracks none).
bool is_registered(MPI_Request handle);

// One atomic load: false in programs without persistent collectives, which then pay nothing else.
bool persistent_requests_exist();
// True while some handle has collective work in flight (one atomic load).
bool device_work_in_flight();

// A registered handle's entry (null when the handle is not registered; one atomic load while none
// is), for the calls below. Look it up before the base MPI's Wait/Test call and keep it: once the
// base MPI has completed a request that is not persistent, it frees the handle, and another thread
// may get the same value for a new request (MPICH reuses handles) and register it, so looking the
// handle up afterwards could find, and change, that thread's entry (test_p2p_random --threads
// found statuses overwritten so, 2026-11-29). A persistent handle is never freed by a completion.
struct PersistentEntry;
using PersistentRef = std::shared_ptr<PersistentEntry>;
PersistentRef find_persistent(MPI_Request handle);

// Whether the base MPI must not see the handle in Waitany/Testany/Waitsome/Testsome: a registered
// handle that is inactive (*running false) or whose collective still runs (*running true).
// The operation's failure is not returned here but by mark_completed, with the handle's completion.
void hide_from_base(const PersistentRef& entry, bool* hide, bool* running);
// Tests (without blocking) the collective work behind the handle; *running is false for handles
// that are not registered or have none in flight.
void test_device_work(const PersistentRef& entry, bool* running);
// Waits for the collective work behind the handle (none: returns at once).
void wait_device_work(const PersistentRef& entry);
void wait_device_work(MPI_Request handle);  // a live handle, before any base call on it
// Whether the handle is registered and inactive (never started, or completed since its last start);
// then *status (unless MPI_STATUS_IGNORE) is the empty status MPI gives an inactive request. The base
// MPI is not asked: MPICH 4.0.2 reports a never-started persistent collective, the library's
// handle, incomplete for ever.
bool report_inactive(const PersistentRef& entry, MPI_Status* status);
// Records that the base MPI has completed the handle (it is inactive until its next MPI_Start), and
// puts the status of the operation behind it, if the library owns one, into *status (unless
// MPI_STATUS_IGNORE): the handle's own status says nothing about a receive. Returns the error of
// the round that completed (the base MPI saw its placeholder complete cleanly), MPI_SUCCESS if it
// succeeded; the status's MPI_ERROR field is left to the caller, which sets it only where MPI says
// (MPI_ERR_IN_STATUS of the array forms).
int mark_completed(const PersistentRef& entry, MPI_Status* status = MPI_STATUS_IGNORE);
// Only the status part of mark_completed (MPI_Request_get_status leaves the request active); the
// same error.
int report_status(const PersistentRef& entry, MPI_Status* status);

}  // namespace mcrp
