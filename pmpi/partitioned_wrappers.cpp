// The partitioned point-to-point entry points (MPI 4.0), all through p2p/partitioned.h. They have no
// large-count forms: MPI gives their counts type MPI_Count already.
#include <mpi.h>

#include "p2p/partitioned.h"

extern "C" {

int MPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return mcrp::partitioned_init(
      {"MPI_Psend_init", false, const_cast<void*>(buf), partitions, count, datatype, dest, tag, comm, info}, request);
}

int MPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return mcrp::partitioned_init({"MPI_Precv_init", true, buf, partitions, count, datatype, source, tag, comm, info},
                                request);
}

int MPI_Pready(int partition, MPI_Request request) {
  return mcrp::ready_partitions(mcrp::PartitionList::one(partition), request);
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  return mcrp::ready_partitions(mcrp::PartitionList::range(partition_low, partition_high), request);
}

int MPI_Pready_list(int length, int array_of_partitions[], MPI_Request request) {
  return mcrp::ready_partitions(mcrp::PartitionList::of(length, array_of_partitions), request);
}

int MPI_Parrived(MPI_Request request, int partition, int* flag) {
  return mcrp::partition_arrived(request, partition, flag);
}

}  // extern "C"
