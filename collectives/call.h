// CollCall: one collective call's arguments, normalized so that the int and large-count (_c) forms
// of every entry point share one implementation. Building one only copies arguments: no MPI or CUDA
// call happens until the router knows a device buffer is involved.
#pragma once
#include <mpi.h>

#include <type_traits>

#include "collectives/kind.h"

namespace mcrp {

static_assert(std::is_same_v<MPI_Count, MPI_Aint>,
              "the MPICH ABI makes MPI_Count and MPI_Aint the same type; CountArray relies on it");

// A read-only view of a counts or displacements array from either form: int[] or MPI_Count[].
class CountArray {
 public:
  CountArray() = default;
  CountArray(const int* narrow) : narrow_(narrow) {}         // NOLINT: implicit by design
  CountArray(const MPI_Count* wide) : wide_(wide) {}         // NOLINT: implicit by design
  MPI_Count operator[](int i) const { return wide_ != nullptr ? wide_[i] : narrow_[i]; }
  bool present() const { return wide_ != nullptr || narrow_ != nullptr; }
  bool wide() const { return wide_ != nullptr; }  // from a large-count (_c) entry point
  const int* narrow_data() const { return narrow_; }       // null unless from an int form
  const MPI_Count* wide_data() const { return wide_; }     // null unless from a _c form (or MPI_Aint[])

 private:
  const int* narrow_ = nullptr;
  const MPI_Count* wide_ = nullptr;
};

struct CollCall {
  CollKind kind = CollKind::barrier;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  MPI_Count sendcount = 0;  // reductions and bcast: the one count, also copied to recvcount
  MPI_Count recvcount = 0;
  CountArray sendcounts, sdispls, recvcounts, rdispls;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;  // reductions and bcast: the one type, also recvtype
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;

  bool in_place() const { return sendbuf == MPI_IN_PLACE; }
};

// One builder per collective, taking exactly the arguments listed for it in pmpi/collectives.def.
// Counts are taken as MPI_Count and arrays as CountArray, so both entry-point forms call the same one.
namespace describe {

inline CollCall one_type(CollKind kind, const void* sendbuf, void* recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  CollCall call;
  call.kind = kind;
  call.sendbuf = sendbuf;
  call.recvbuf = recvbuf;
  call.sendcount = call.recvcount = count;
  call.sendtype = call.recvtype = datatype;
  call.op = op;
  call.root = root;
  call.comm = comm;
  return call;
}

inline CollCall two_types(CollKind kind, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm) {
  CollCall call;
  call.kind = kind;
  call.sendbuf = sendbuf;
  call.sendcount = sendcount;
  call.sendtype = sendtype;
  call.recvbuf = recvbuf;
  call.recvcount = recvcount;
  call.recvtype = recvtype;
  call.root = root;
  call.comm = comm;
  return call;
}

inline CollCall allreduce(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return one_type(CollKind::allreduce, s, r, n, t, op, 0, c);
}
inline CollCall scan(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return one_type(CollKind::scan, s, r, n, t, op, 0, c);
}
inline CollCall exscan(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return one_type(CollKind::exscan, s, r, n, t, op, 0, c);
}
inline CollCall reduce(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op, int root,
                       MPI_Comm c) {
  return one_type(CollKind::reduce, s, r, n, t, op, root, c);
}
inline CollCall bcast(void* buffer, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c) {
  return one_type(CollKind::bcast, buffer, buffer, n, t, MPI_OP_NULL, root, c);
}
inline CollCall reduce_scatter_block(const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op op,
                                     MPI_Comm c) {
  return one_type(CollKind::reduce_scatter_block, s, r, n, t, op, 0, c);
}
inline CollCall reduce_scatter(const void* s, void* r, CountArray counts, MPI_Datatype t, MPI_Op op,
                               MPI_Comm c) {
  CollCall call = one_type(CollKind::reduce_scatter, s, r, 0, t, op, 0, c);
  call.recvcounts = counts;
  return call;
}
inline CollCall allgather(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                          MPI_Datatype rt, MPI_Comm c) {
  return two_types(CollKind::allgather, s, sn, st, r, rn, rt, 0, c);
}
inline CollCall alltoall(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                         MPI_Datatype rt, MPI_Comm c) {
  return two_types(CollKind::alltoall, s, sn, st, r, rn, rt, 0, c);
}
inline CollCall gather(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn, MPI_Datatype rt,
                       int root, MPI_Comm c) {
  return two_types(CollKind::gather, s, sn, st, r, rn, rt, root, c);
}
inline CollCall scatter(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                        MPI_Datatype rt, int root, MPI_Comm c) {
  return two_types(CollKind::scatter, s, sn, st, r, rn, rt, root, c);
}
inline CollCall allgatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* r, CountArray counts,
                           CountArray displs, MPI_Datatype rt, MPI_Comm c) {
  CollCall call = two_types(CollKind::allgatherv, s, sn, st, r, 0, rt, 0, c);
  call.recvcounts = counts;
  call.rdispls = displs;
  return call;
}
inline CollCall gatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* r, CountArray counts,
                        CountArray displs, MPI_Datatype rt, int root, MPI_Comm c) {
  CollCall call = two_types(CollKind::gatherv, s, sn, st, r, 0, rt, root, c);
  call.recvcounts = counts;
  call.rdispls = displs;
  return call;
}
inline CollCall scatterv(const void* s, CountArray counts, CountArray displs, MPI_Datatype st, void* r,
                         MPI_Count rn, MPI_Datatype rt, int root, MPI_Comm c) {
  CollCall call = two_types(CollKind::scatterv, s, 0, st, r, rn, rt, root, c);
  call.sendcounts = counts;
  call.sdispls = displs;
  return call;
}
inline CollCall alltoallv(const void* s, CountArray scounts, CountArray sdispls, MPI_Datatype st, void* r,
                          CountArray rcounts, CountArray rdispls, MPI_Datatype rt, MPI_Comm c) {
  CollCall call = two_types(CollKind::alltoallv, s, 0, st, r, 0, rt, 0, c);
  call.sendcounts = scounts;
  call.sdispls = sdispls;
  call.recvcounts = rcounts;
  call.rdispls = rdispls;
  return call;
}
inline CollCall barrier(MPI_Comm c) {
  CollCall call;
  call.kind = CollKind::barrier;
  call.comm = c;
  return call;
}

}  // namespace describe
}  // namespace mcrp
