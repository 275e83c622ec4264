#include "runtime/disconnect.h"

#include "runtime/base_collective_meeting.h"
#include "runtime/handle_holds.h"
#include "runtime/persistent.h"
#include "runtime/requests.h"

namespace mcrp {

int disconnect_comm(MPI_Comm* comm) {
  if (comm == nullptr || *comm == MPI_COMM_NULL) return PMPI_Comm_disconnect(comm);  // the base MPI's error
  const MPI_Comm disconnecting = *comm;
  const int freed = check_not_freed(disconnecting, "MPI_Comm_disconnect");
  if (freed != MPI_SUCCESS) return freed;
  finish_requests_on(disconnecting);
  const int rc = after_meeting(disconnecting, [comm] { return PMPI_Comm_disconnect(comm); });
  if (rc == MPI_SUCCESS) comm_disconnected(disconnecting);
  return rc;
}

}  // namespace mcrp
