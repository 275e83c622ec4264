// MPI_Error_string and MPI_Error_class for the codes the library raises (runtime/errors.h): the
// library's message (the call, the communicator size, the cause in NCCL's or CUDA's words) through
// every caller, mpi4py's exceptions included. Other codes are the base MPI's.
// MPI_Comm_create_errhandler: the program's handler, wrapped to record the codes the base MPI gives
// it (runtime/raised_errors.h).
#include <mpi.h>

#include "runtime/errors.h"
#include "runtime/raised_errors.h"

extern "C" {

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* comm_errhandler_fn, MPI_Errhandler* errhandler) {
  MPI_Comm_errhandler_function* handler =
      comm_errhandler_fn != nullptr ? mcrp::recording_comm_handler(comm_errhandler_fn) : nullptr;
  return PMPI_Comm_create_errhandler(handler, errhandler);
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (string != nullptr && resultlen != nullptr && mcrp::library_error_string(errorcode, string, resultlen)) {
    return MPI_SUCCESS;
  }
  return PMPI_Error_string(errorcode, string, resultlen);
}

int MPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass != nullptr && mcrp::library_error_class(errorcode, errorclass)) return MPI_SUCCESS;
  return PMPI_Error_class(errorcode, errorclass);
}

}  // extern "C"
