// The two forms of every collective entry point: MPI_X (int counts) and MPI_X_c (MPI_Count counts,
// MPI_Aint displacements). Tests describe a call once, with wide counts, and `call::` sends it to
// the chosen form, so each check covers both symbols without being written twice.
#pragma once
#include <mpi.h>

#include <vector>

namespace mcrp_test {

enum class CountForm { narrow, large };
constexpr CountForm kCountForms[] = {CountForm::narrow, CountForm::large};
const char* form_name(CountForm form);  // "int" or "_c"

using Counts = std::vector<MPI_Count>;
using Displs = std::vector<MPI_Aint>;

namespace call {

int allreduce(CountForm f, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm);
int reduce(CountForm f, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
           int root, MPI_Comm comm);
int bcast(CountForm f, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
int allgather(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int allgatherv(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               const Counts& recvcounts, const Displs& displs, MPI_Datatype recvtype, MPI_Comm comm);
int reduce_scatter(CountForm f, const void* sendbuf, void* recvbuf, const Counts& recvcounts, MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm);
int reduce_scatter_block(CountForm f, const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int alltoall(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int alltoallv(CountForm f, const void* sendbuf, const Counts& sendcounts, const Displs& sdispls,
              MPI_Datatype sendtype, void* recvbuf, const Counts& recvcounts, const Displs& rdispls,
              MPI_Datatype recvtype, MPI_Comm comm);
int gather(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
           MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int gatherv(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            const Counts& recvcounts, const Displs& displs, MPI_Datatype recvtype, int root, MPI_Comm comm);
int scatter(CountForm f, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int scatterv(CountForm f, const void* sendbuf, const Counts& sendcounts, const Displs& displs,
             MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
             MPI_Comm comm);
int scan(CountForm f, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
         MPI_Comm comm);
int exscan(CountForm f, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
           MPI_Comm comm);

}  // namespace call
}  // namespace mcrp_test
