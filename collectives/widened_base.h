// MPICH 4.0.2 defect (docs/base-mpi-defects.md): the int forms of
// MPI_Neighbor_alltoallw, blocking, nonblocking and persistent, lose receive blocks when a rank's
// in-degree exceeds its out-degree (the receivers of a one-way graph get nothing; measured with a
// plain MPI program, no library), while the large-count (_c) forms deliver them. So the library's
// base calls for the int forms go to the _c forms, with the counts widened. MPICH's own int forms
// convert their arrays into temporaries too, so the base MPI reads them only inside the call.
#pragma once
#include <mpi.h>

namespace mcrp {

int widened_neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                               const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                               const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm);
int widened_ineighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                                const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                                const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                                MPI_Request* request);
int widened_neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                                    const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                                    const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request);

}  // namespace mcrp
