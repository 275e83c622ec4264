// Request entry points the library must see: starting, cancelling and freeing a persistent request
// may concern a device-buffer operation the library owns (runtime/persistent.h), and the Wait/Test
// family must not report such a request complete before its collective is
// (runtime/wait_family.h). Generalized requests (device nonblocking calls) need nothing here:
// the base MPI's Wait/Test poll them itself.
#include <mpi.h>

#include "runtime/persistent.h"
#include "runtime/wait_family.h"

extern "C" {

int MPI_Start(MPI_Request* request) { return mcrp::start_request(request); }

// Started one by one in array order, as MPI defines Startall.
int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  if (count < 0 || (count > 0 && array_of_requests == nullptr)) {
    return PMPI_Startall(count, array_of_requests);  // the base MPI reports the bad argument
  }
  for (int i = 0; i < count; ++i) {
    const int rc = mcrp::start_request(&array_of_requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request* request) { return mcrp::free_request(request); }

int MPI_Cancel(MPI_Request* request) { return mcrp::cancel_request(request); }

int MPI_Wait(MPI_Request* request, MPI_Status* status) { return mcrp::wait_one(request, status); }
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  return mcrp::wait_all(count, array_of_requests, array_of_statuses);
}
int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  return mcrp::wait_any(count, array_of_requests, index, status);
}
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  return mcrp::wait_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) { return mcrp::test_one(request, flag, status); }
int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  return mcrp::test_all(count, array_of_requests, flag, array_of_statuses);
}
int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  return mcrp::test_any(count, array_of_requests, index, flag, status);
}
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]) {
  return mcrp::test_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return mcrp::request_get_status(request, flag, status);
}

}  // extern "C"
