#include "collectives/test_all.h"

namespace mcrp {

int test_all(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (count < 0 || flag == nullptr || (count > 0 && requests == nullptr)) {
    return PMPI_Testall(count, requests, flag, statuses);  // the base MPI reports the bad argument
  }
  for (int i = 0; i < count; ++i) {
    int done = 0;
    const int rc = PMPI_Request_get_status(requests[i], &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    if (!done) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return PMPI_Waitall(count, requests, statuses);
}

}  // namespace mcrp
