// MPI_Error_string and MPI_Error_class for the codes the library raises (runtime/errors.h): the
// library's message (the call, the communicator size, the cause in NCCL's or CUDA's words) through
// every caller, mpi4py's exceptions included. Other codes are the base MPI's.
#include <mpi.h>

#include "runtime/errors.h"

extern "C" {

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
