// Turning a failed Status into what MPI promises: an error code delivered through the communicator's
// error handler, whose string names the call, the communicator size and the underlying cause.
#pragma once
#include <mpi.h>

#include "collectives/kind.h"
#include "device/status.h"

namespace mcrp {

// A Status carrying an MPI error code that the base MPI already raised (its handler already ran).
Status already_raised(int mpi_code);

// Raises `status` on `comm` and returns the code the MPI call must return.
int raise_error(MPI_Comm comm, CollKind kind, int comm_size, const Status& status);

}  // namespace mcrp
