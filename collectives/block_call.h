// BlockCall: one call of a collective listed in pmpi/block_collectives.def (MPI_Alltoallw, the
// neighborhood collectives), normalized so that the int and large-count forms share one
// implementation, as CollCall is for the routed collectives. Building one only copies arguments.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "collectives/call.h"

namespace mcrp {

enum class BlockKind : std::uint8_t {
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) kind,
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
};

inline constexpr int kBlockKindCount = 0
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) +1
#include "pmpi/block_collectives.def"
#undef MCRPMPI_BLOCK_COLLECTIVE
    ;

// "MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv": the entry points' names, for messages.
const char* mpi_name(BlockKind kind);
const char* nonblocking_mpi_name(BlockKind kind);

struct BlockCall {
  BlockKind kind = BlockKind::alltoallw;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  MPI_Count sendcount = 0;  // the uniform forms' (neighbor_allgather(v), neighbor_alltoall)
  MPI_Count recvcount = 0;
  CountArray sendcounts, sdispls, recvcounts, rdispls;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;  // one datatype per side, or ...
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  const MPI_Datatype* sendtypes = nullptr;  // ... the w forms' one per block, whose displacements
  const MPI_Datatype* recvtypes = nullptr;  // are then in bytes
  MPI_Comm comm = MPI_COMM_NULL;

  bool per_block_types() const { return kind == BlockKind::alltoallw || kind == BlockKind::neighbor_alltoallw; }
  bool neighborhood() const { return kind != BlockKind::alltoallw; }
};

// One builder per line of pmpi/block_collectives.def, overloading the routed collectives' builders'
// namespace so that the same wrapper macros serve both lists.
namespace describe {

inline BlockCall uniform_block(BlockKind kind, const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                               MPI_Datatype rt, MPI_Comm c) {
  BlockCall call;
  call.kind = kind;
  call.sendbuf = s;
  call.sendcount = sn;
  call.sendtype = st;
  call.recvbuf = r;
  call.recvcount = rn;
  call.recvtype = rt;
  call.comm = c;
  return call;
}

inline BlockCall typed_blocks(BlockKind kind, const void* s, CountArray scounts, CountArray sdispls,
                              const MPI_Datatype* stypes, void* r, CountArray rcounts, CountArray rdispls,
                              const MPI_Datatype* rtypes, MPI_Comm c) {
  BlockCall call;
  call.kind = kind;
  call.sendbuf = s;
  call.sendcounts = scounts;
  call.sdispls = sdispls;
  call.sendtypes = stypes;
  call.recvbuf = r;
  call.recvcounts = rcounts;
  call.rdispls = rdispls;
  call.recvtypes = rtypes;
  call.comm = c;
  return call;
}

inline BlockCall alltoallw(const void* s, CountArray scounts, CountArray sdispls, const MPI_Datatype* stypes, void* r,
                           CountArray rcounts, CountArray rdispls, const MPI_Datatype* rtypes, MPI_Comm c) {
  return typed_blocks(BlockKind::alltoallw, s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, c);
}
inline BlockCall neighbor_alltoallw(const void* s, CountArray scounts, CountArray sdispls, const MPI_Datatype* stypes,
                                    void* r, CountArray rcounts, CountArray rdispls, const MPI_Datatype* rtypes,
                                    MPI_Comm c) {
  return typed_blocks(BlockKind::neighbor_alltoallw, s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, c);
}
inline BlockCall neighbor_allgather(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                                    MPI_Datatype rt, MPI_Comm c) {
  return uniform_block(BlockKind::neighbor_allgather, s, sn, st, r, rn, rt, c);
}
inline BlockCall neighbor_alltoall(const void* s, MPI_Count sn, MPI_Datatype st, void* r, MPI_Count rn,
                                   MPI_Datatype rt, MPI_Comm c) {
  return uniform_block(BlockKind::neighbor_alltoall, s, sn, st, r, rn, rt, c);
}
inline BlockCall neighbor_allgatherv(const void* s, MPI_Count sn, MPI_Datatype st, void* r, CountArray counts,
                                     CountArray displs, MPI_Datatype rt, MPI_Comm c) {
  BlockCall call = uniform_block(BlockKind::neighbor_allgatherv, s, sn, st, r, 0, rt, c);
  call.recvcounts = counts;
  call.rdispls = displs;
  return call;
}
inline BlockCall neighbor_alltoallv(const void* s, CountArray scounts, CountArray sdispls, MPI_Datatype st, void* r,
                                    CountArray rcounts, CountArray rdispls, MPI_Datatype rt, MPI_Comm c) {
  BlockCall call = uniform_block(BlockKind::neighbor_alltoallv, s, 0, st, r, 0, rt, c);
  call.sendcounts = scounts;
  call.sdispls = sdispls;
  call.recvcounts = rcounts;
  call.rdispls = rdispls;
  return call;
}

}  // namespace describe
}  // namespace mcrp
