// Request entry points the library must see: starting and freeing a persistent request may concern
// a device-buffer collective the library owns (collectives/requests_persistent.h). Everything else
// passes straight to the base MPI. The Wait/Test family and MPI_Request_get_status need no wrapper:
// every handle the library returns is a real request of the base MPI (a persistent one, or a
// generalized one whose poll function MPI_Wait/Test call), so the base MPI completes them itself --
// except MPI_Testall, which works around a base-MPI defect (collectives/test_all.h).
#include <mpi.h>

#include "collectives/requests_persistent.h"
#include "collectives/test_all.h"

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

int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  return mcrp::test_all(count, array_of_requests, flag, array_of_statuses);
}

}  // extern "C"
