// Partitioned point-to-point (MPI 4.0: MPI_Psend_init, MPI_Precv_init, MPI_Pready, MPI_Pready_range,
// MPI_Pready_list, MPI_Parrived) on device buffers, staged: the base MPI matches and moves the
// message as a partitioned request of its own on a pinned host image of the whole buffer, and the
// library moves each partition between the device and that image.
//   send:    MPI_Pready copies the partitions it names to the image (after the application's earlier
//            work on the legacy default stream) and, once the copy is done, readies them in the
//            base MPI, so the base MPI may send them at once;
//   receive: MPI_Parrived asks the base MPI; a partition that has arrived is copied to the device,
//            and flag is true only once that copy is done. At the round's completion every partition
//            not yet copied is, before the request completes.
// The user's handle is a library persistent request (runtime/persistent.h): MPI_Start starts the base
// MPI's request, the Wait/Test family completes both. Host buffers get the base MPI's own request
// and calls, untouched. A CUDA-aware base MPI gets the device buffer itself in a request of the
// same kind: MPI_Pready (and a receive's MPI_Start) then waits only for the application's earlier
// work on the legacy default stream, and MPI_Parrived is the base MPI's answer.
#pragma once
#include <mpi.h>

namespace mcrp {

// The arguments of MPI_Psend_init (receives false) or MPI_Precv_init (receives true).
struct PartitionedCall {
  const char* entry = "";
  bool receives = false;
  void* buf = nullptr;
  int partitions = 0;
  MPI_Count count = 0;  // elements per partition
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
};
int partitioned_init(const PartitionedCall& call, MPI_Request* request);

// The partitions an MPI_Pready form names: one, the range [low, high], or a list.
struct PartitionList {
  enum class Form { one, range, list };
  Form form = Form::one;
  int low = 0;
  int high = 0;
  int length = 0;
  int* list = nullptr;  // MPICH 4.0.2 declares MPI_Pready_list's array non-const

  static PartitionList one(int partition) { return {Form::one, partition, partition, 1, nullptr}; }
  static PartitionList range(int low, int high) { return {Form::range, low, high, high - low + 1, nullptr}; }
  static PartitionList of(int length, int* list) { return {Form::list, 0, 0, length, list}; }
  int at(int i) const { return form == Form::list ? list[i] : low + i; }
};
int ready_partitions(const PartitionList& partitions, MPI_Request request);

int partition_arrived(MPI_Request request, int partition, int* flag);

}  // namespace mcrp
