// What the point-to-point paths need about one call, computed once by the router: the send and
// receive sides as buffers (runtime/buffer.h), with significance as MPI defines it -- a side whose
// peer is MPI_PROC_NULL (or an Mrecv of MPI_MESSAGE_NO_PROC) moves nothing and is never read --
// their datatypes' geometry, and the device the buffers are on.
#pragma once
#include <mpi.h>

#include "p2p/call.h"
#include "runtime/buffer.h"

namespace mcrp {

struct P2PPrepared {
  const P2PCall* call = nullptr;
  BufferSide send;  // read
  BufferSide recv;  // written (Sendrecv_replace: the one buffer, read and written)
  TypeInfo send_type;
  TypeInfo recv_type;
  int device = -1;  // CUDA ordinal of the device buffers
};

// The sides of `call` (no MPI call is made).
void describe_sides(const P2PCall& call, P2PPrepared* p);

}  // namespace mcrp
