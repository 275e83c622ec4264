// MPI_Comm_disconnect through the library: what the library runs on the communicator ends with it.
#pragma once
#include <mpi.h>

namespace mcrp {

// MPI_Comm_disconnect. MPI (4.1, 12.10.4) lets inactive persistent requests and requests freed
// while active remain on the communicator, and the call waits for the latter. So:
// - the library's own operations on it (freed ones included) finish first: the base MPI cannot see
//   them, and after the call the NCCL communicator and protocol engine they use are released;
// - under MCRPMPI_POLLING_COLLECTIVES=1 the members meet in a polled barrier
//   (runtime/base_collective_meeting.h), then the base MPI's disconnect;
// - then the library's persistent requests on it let it go (runtime/persistent.h): a later
//   MPI_Start of one fails with MPI_ERR_REQUEST, MPI_Request_free of one works.
// A communicator the program already freed, which one of the library's requests still holds, is
// reported as a second free is (MPI_ERR_COMM), and stays held.
int disconnect_comm(MPI_Comm* comm);

}  // namespace mcrp
