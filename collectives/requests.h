// Device-buffer nonblocking collectives as real MPI_Request handles. Each in-flight operation is an
// AsyncOp wrapped in an MPICH generalized request (MPIX_Grequest_start) whose poll function advances
// it; so MPI_Wait/Test and the whole Wait/Test family drive it, in one array with the base MPI's own
// requests, while the base MPI keeps progressing (guarantee 3). The op owns every scratch and host
// buffer until it completes, and releases them before the request is marked complete (guarantee 5).
#pragma once
#include <mpi.h>

#include <memory>

#include "collectives/kind.h"
#include "device/handles.h"
#include "device/status.h"

namespace mcrp {

class AsyncOp {
 public:
  virtual ~AsyncOp() = default;
  // Advances the operation without blocking; sets *done once nothing of it remains in flight.
  virtual Status progress(bool* done) = 0;
};

// Wraps a started op into *request. On failure *request is MPI_REQUEST_NULL and the op is dropped.
Status start_generalized(std::unique_ptr<AsyncOp> op, MPI_Comm comm, CollKind kind, MPI_Request* request);

// A request that is already complete: for device calls that ran to completion when issued.
Status start_completed(MPI_Request* request);

}  // namespace mcrp
