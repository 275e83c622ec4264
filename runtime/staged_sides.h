// The staged path's core, whatever call it serves: a call's two buffer sides, their pinned host
// images, and the base MPI's entry point run on those images. The routed collectives
// (collectives/staged.cpp, from a Prepared), the collectives that only staging serves
// (collectives/block_dispatch.h: MPI_Alltoallw, the neighborhood collectives) and the local calls
// (local/local_calls.h: MPI_Reduce_local, MPI_Pack, MPI_Unpack) all run through it, so there is one
// place that orders, copies and waits.
#pragma once
#include <mpi.h>

#include "device/status.h"
#include "runtime/buffer.h"

namespace mcrp {

struct StagedSides {
  BufferSide send;  // read only
  BufferSide recv;  // written (and read with MPI_IN_PLACE)
  TypeInfo send_type, recv_type;
  // The caller's own buffer arguments, passed unchanged where a side is not significant
  // (MPI_IN_PLACE, a pointer MPI ignores on this rank).
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  int device = -1;  // CUDA ordinal of the device sides: the copy stream's device
};

// The CUDA ordinal of the first significant side whose data starts in device memory, or -1 (a
// host call: nothing to stage).
int device_of(const StagedSides& sides);

// How a staged call reaches the base MPI: its entry point on the given buffers (host images where a
// side was staged), the blocking form when `request` is null, else the nonblocking one.
class StagedBase {
 public:
  virtual int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request) const = 0;

 protected:
  ~StagedBase() = default;
};

// Blocking: copies device sides in, runs `base` on the images, copies the results back, and
// returns with them in place. With copy == false (a CUDA-aware base MPI) it only orders the base
// call after the application's prior device work.
Status run_staged_sides(const StagedSides& sides, const StagedBase& base, bool copy);
// The same on sides the caller holds (a routed call's layout), which need not be copied.
Status run_staged_sides(const BufferSide& send, const TypeInfo& send_type, const BufferSide& recv,
                        const TypeInfo& recv_type, const void* sendbuf, void* recvbuf, int device,
                        const StagedBase& base, bool copy);

// Nonblocking: copies in and runs `base` (a nonblocking entry point) now; *request (requests.h)
// completes once the base MPI's request has and the results are back. `call` names the entry point
// and `comm` is where errors are raised.
Status start_staged_sides(StagedSides sides, const StagedBase& base, bool copy, MPI_Comm comm, const char* call,
                          MPI_Request* request);

}  // namespace mcrp
