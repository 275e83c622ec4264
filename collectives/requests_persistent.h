// Device-buffer persistent collectives. The handle the user gets is a real persistent request of
// the base MPI (an MPI_Barrier_init on MPI_COMM_SELF, which completes as soon as it is started), so
// Wait/Test/Request_get_status/Request_free and mixing with other requests all work unchanged. The
// library keeps a registry from that handle to the collective; MPI_Start/Startall run the
// collective through the router (to completion, before starting the handle), and MPI_Request_free
// drops the entry. Cost: such a Start blocks until the device collective is done (see README).
#pragma once
#include <mpi.h>

#include "collectives/call.h"
#include "collectives/dispatch.h"
#include "device/status.h"

namespace mcrp {

// Creates the handle in *request and remembers `call` and its blocking base entry point.
Status create_persistent(const CollCall& call, OwnedBaseCall blocking, MPI_Request* request);

// MPI_Start for any request: runs a registered collective first, then starts the handle.
int start_request(MPI_Request* request);

// MPI_Request_free for any request: forgets a registered one, then frees the handle.
int free_request(MPI_Request* request);

}  // namespace mcrp
