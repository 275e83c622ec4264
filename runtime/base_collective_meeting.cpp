#include "runtime/base_collective_meeting.h"

#include "runtime/config.h"
#include "runtime/mpich_handles.h"
#include "runtime/wait_family.h"

namespace mcrp {

int meet_before_base_collective(MPI_Comm comm) {
  if (!config().polling_collectives || !is_comm_handle(comm)) return MPI_SUCCESS;
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Ibarrier(comm, &request);
  return rc != MPI_SUCCESS ? rc : wait_polling(&request, MPI_STATUS_IGNORE);
}

}  // namespace mcrp
