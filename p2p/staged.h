// The staged point-to-point path: the base MPI matches and moves every message on the user's
// communicator with the user's envelope, and the library only moves data between the device and
// pinned host memory. A device send buffer is copied to a host image and sent from there; a device
// receive lands in a host image and is copied to the device before the receive completes (only the
// bytes the message delivered). Statuses are the base MPI's. With `copy` false (the base MPI is
// CUDA-aware) the device pointers go to the base MPI itself, after the application's prior work on
// the legacy default stream.
#pragma once
#include <mpi.h>

#include "p2p/prepared.h"
#include "device/status.h"

namespace mcrp {

// Blocking: returns with the operation complete and received data on the device; *status (unless
// MPI_STATUS_IGNORE) is the base MPI's.
Status run_staged_p2p(const P2PPrepared& prepared, const P2PBaseCall& base, bool copy, MPI_Status* status);

// Nonblocking: stages the send side now, starts the base MPI's nonblocking operation on the images
// and puts a request that completes it (copying the received bytes back first) in *request. With
// `copy` false it stages nothing: for the sendrecv kinds on a CUDA-aware base MPI, which run as a
// receive and a send here too (the base MPI's own MPI_Isendrecv may report a wrong status, below).
Status start_staged_p2p(const P2PPrepared& prepared, const P2PBaseCall& base, bool copy, MPI_Request* request);

}  // namespace mcrp
