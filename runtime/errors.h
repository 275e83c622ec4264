// Turning a failed Status into what MPI promises: an error code delivered through the communicator's
// error handler, whose string names the call, the communicator size and the underlying cause.
#pragma once
#include <mpi.h>

#include "device/status.h"
#include "runtime/raised_errors.h"

namespace mcrp {

// A Status carrying an MPI error code that the base MPI already raised (its handler already ran).
Status already_raised(int mpi_code);
// The Status of a base-MPI call's return code: success, or already_raised(rc). A success after the
// base MPI gave the program's handler an error is that error (runtime/raised_errors.h).
inline Status from_base(int rc) {
  const int raised = take_raised_code();
  if (rc == MPI_SUCCESS) rc = raised;
  return rc == MPI_SUCCESS ? Status() : already_raised(rc);
}

// Raises `status` on `comm` and returns the code the MPI call must return. `call` names the entry
// point ("MPI_Allreduce"); comm_size > 0 adds "on a communicator of N ranks" to the message.
int raise_error(MPI_Comm comm, const char* call, int comm_size, const Status& status);

// The library's own codes, for MPI_Error_string and MPI_Error_class (MPICH 4.0.2 answers an added
// code with an unrelated string from its error ring). False for codes the library did not raise.
bool library_error_string(int code, char* text, int* length);
bool library_error_class(int code, int* error_class);

}  // namespace mcrp
