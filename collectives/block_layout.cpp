#include "collectives/block_layout.h"

#include <cstdint>
#include <vector>

#include "runtime/mpich_handles.h"

namespace mcrp {
namespace {

// One block as the call describes it: `count` elements of `type` at `displacement`, in bytes (the
// w forms) or in extents of the type (the others).
struct TypedBlock {
  MPI_Count displacement = 0;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

struct TypedSide {
  const void* base = nullptr;
  std::vector<TypedBlock> blocks;
  bool displacements_in_bytes = false;
};

const Status kMissingArray(MPI_ERR_ARG, "null counts, displacements or datatypes array");

// `n` blocks, block i at displs[i] with counts[i] elements of types[i] (or of `type` when types is
// null); the arrays must exist when there are blocks to describe (a rank with no neighbors may
// pass NULL).
Status from_arrays(const void* base, int n, const CountArray& counts, const CountArray& displs, MPI_Datatype type,
                   const MPI_Datatype* types, TypedSide* side) {
  side->base = base;
  if (n == 0) return {};
  if (!counts.present() || !displs.present()) return kMissingArray;
  side->blocks.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) side->blocks[i] = TypedBlock{displs[i], counts[i], types != nullptr ? types[i] : type};
  return {};
}

Status per_block_types(const void* base, int n, const CountArray& counts, const CountArray& displs,
                       const MPI_Datatype* types, TypedSide* side) {
  if (n > 0 && types == nullptr) return kMissingArray;
  side->displacements_in_bytes = true;
  return from_arrays(base, n, counts, displs, MPI_DATATYPE_NULL, types, side);
}

// `n` blocks of `count` elements, block i at i*count.
void uniform(const void* base, int n, MPI_Count count, MPI_Datatype type, TypedSide* side) {
  side->base = base;
  side->blocks.resize(static_cast<std::size_t>(n));
  MPI_Count displacement = 0;
  for (TypedBlock& block : side->blocks) {
    block = TypedBlock{displacement, count, type};
    // Saturates (bad input): the geometry below then refuses the block's bytes as too large.
    if (__builtin_add_overflow(displacement, count, &displacement)) displacement = INT64_MAX;
  }
}

// The byte range [lo, hi) a block's elements reach from the side's base; false when it passes 2^63.
bool reached_bytes(const TypedBlock& b, const TypeInfo& type, bool in_bytes, MPI_Count* lo, MPI_Count* hi) {
  MPI_Count offset = b.displacement, last = 0;
  if (!in_bytes && __builtin_mul_overflow(b.displacement, type.extent, &offset)) return false;
  return !__builtin_add_overflow(offset, type.true_lb, lo) && !__builtin_mul_overflow(b.count - 1, type.extent, &last) &&
         !__builtin_add_overflow(*lo, last, hi) && !__builtin_add_overflow(*hi, type.true_extent, hi);
}

// The checked geometry of one side as MPI_BYTE blocks, and (when `data_bytes` is given) the bytes of
// data its blocks hold, saturating. Datatypes are asked once per run of equal handles (a uniform
// side asks once).
Status to_bytes(const TypedSide& typed, MPI_Comm comm, bool written, BufferSide* side,
                MPI_Count* data_bytes = nullptr) {
  side->base = static_cast<char*>(const_cast<void*>(typed.base));
  side->type = MPI_BYTE;
  side->read = !written;
  side->written = written;
  for (const TypedBlock& b : typed.blocks) {
    if (b.count < 0) return Status(MPI_ERR_COUNT, "negative count");
  }
  side->blocks.reserve(typed.blocks.size());
  MPI_Datatype known = MPI_DATATYPE_NULL;
  TypeInfo type;
  bool holes = false;
  for (const TypedBlock& b : typed.blocks) {
    if (b.count == 0) continue;  // its datatype moves nothing: MPI lets it be anything
    if (b.type != known || known == MPI_DATATYPE_NULL) {
      MCRP_TRY(type_info(b.type, &type));
      MCRP_TRY(check_committed(b.type, comm));
      known = b.type;
      holes = holes || !type.contiguous();
    }
    MPI_Count lo = 0, hi = 0;
    if (!reached_bytes(b, type, typed.displacements_in_bytes, &lo, &hi)) {
      return Status(MPI_ERR_COUNT, "count * extent of the datatype overflows 2^63 bytes");
    }
    // A NULL base is MPI_BOTTOM only for data at absolute addresses: a datatype with an absolute
    // lower bound (as check_side has it), or, with byte displacements, any block not at address 0.
    const bool absolute = typed.displacements_in_bytes ? lo != 0 : type.true_lb != 0;
    if (typed.base == nullptr && hi > lo && !absolute) return Status(MPI_ERR_BUFFER, "null buffer with a nonzero count");
    side->blocks.push_back(Block{lo, hi - lo});
    MPI_Count block_bytes = 0;
    if (data_bytes != nullptr && (__builtin_mul_overflow(b.count, type.size, &block_bytes) ||
                                  __builtin_add_overflow(*data_bytes, block_bytes, data_bytes))) {
      *data_bytes = INT64_MAX;
    }
  }
  if (written && holes) side->read = true;
  return {};
}

}  // namespace

bool block_counts(const BlockCall& c, BlockCounts* counts) {
  int inter = 0;
  if (PMPI_Comm_test_inter(c.comm, &inter) != MPI_SUCCESS) return false;
  counts->inter = inter != 0;
  if (!c.neighborhood()) {
    int peers = 0;
    const int rc = counts->inter ? PMPI_Comm_remote_size(c.comm, &peers) : PMPI_Comm_size(c.comm, &peers);
    counts->sends = counts->receives = peers;
    return rc == MPI_SUCCESS;
  }
  int topology = MPI_UNDEFINED;
  if (PMPI_Topo_test(c.comm, &topology) != MPI_SUCCESS) return false;
  int neighbors = 0;
  switch (topology) {
    case MPI_CART: {
      int dimensions = 0;
      if (PMPI_Cartdim_get(c.comm, &dimensions) != MPI_SUCCESS) return false;
      for (int d = 0; d < dimensions; ++d) {
        int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
        if (PMPI_Cart_shift(c.comm, d, 1, &below, &above) != MPI_SUCCESS) return false;
        counts->null_neighbors = counts->null_neighbors || below == MPI_PROC_NULL || above == MPI_PROC_NULL;
      }
      neighbors = 2 * dimensions;  // one each way along every dimension, MPI_PROC_NULL ones included
      break;
    }
    case MPI_GRAPH: {
      int rank = 0;
      if (PMPI_Comm_rank(c.comm, &rank) != MPI_SUCCESS ||
          PMPI_Graph_neighbors_count(c.comm, rank, &neighbors) != MPI_SUCCESS) {
        return false;
      }
      break;
    }
    case MPI_DIST_GRAPH: {
      int weighted = 0;
      return PMPI_Dist_graph_neighbors_count(c.comm, &counts->receives, &counts->sends, &weighted) == MPI_SUCCESS;
    }
    default: return false;
  }
  counts->sends = counts->receives = neighbors;
  return true;
}

Status block_sides(const BlockCall& c, const BlockCounts& n, StagedSides* sides, MPI_Count* received) {
  const bool send_in_place = c.sendbuf == MPI_IN_PLACE;
  // MPI allows MPI_IN_PLACE only as MPI_Alltoallw's send buffer on an intracommunicator.
  if (c.recvbuf == MPI_IN_PLACE || (send_in_place && (c.neighborhood() || n.inter))) {
    return Status(MPI_ERR_BUFFER, "MPI_IN_PLACE where MPI does not allow it");
  }
  TypedSide send, recv;
  switch (c.kind) {
    case BlockKind::alltoallw:
    case BlockKind::neighbor_alltoallw:
      if (!send_in_place) MCRP_TRY(per_block_types(c.sendbuf, n.sends, c.sendcounts, c.sdispls, c.sendtypes, &send));
      MCRP_TRY(per_block_types(c.recvbuf, n.receives, c.recvcounts, c.rdispls, c.recvtypes, &recv));
      break;
    case BlockKind::neighbor_allgather:
      uniform(c.sendbuf, 1, c.sendcount, c.sendtype, &send);
      uniform(c.recvbuf, n.receives, c.recvcount, c.recvtype, &recv);
      break;
    case BlockKind::neighbor_allgatherv:
      uniform(c.sendbuf, 1, c.sendcount, c.sendtype, &send);
      MCRP_TRY(from_arrays(c.recvbuf, n.receives, c.recvcounts, c.rdispls, c.recvtype, nullptr, &recv));
      break;
    case BlockKind::neighbor_alltoall:
      uniform(c.sendbuf, n.sends, c.sendcount, c.sendtype, &send);
      uniform(c.recvbuf, n.receives, c.recvcount, c.recvtype, &recv);
      break;
    case BlockKind::neighbor_alltoallv:
      MCRP_TRY(from_arrays(c.sendbuf, n.sends, c.sendcounts, c.sdispls, c.sendtype, nullptr, &send));
      MCRP_TRY(from_arrays(c.recvbuf, n.receives, c.recvcounts, c.rdispls, c.recvtype, nullptr, &recv));
      break;
  }
  sides->send = BufferSide{};
  if (!send_in_place) MCRP_TRY(to_bytes(send, c.comm, false, &sides->send));
  if (received != nullptr) *received = 0;
  MCRP_TRY(to_bytes(recv, c.comm, true, &sides->recv, received));
  if (send_in_place) sides->recv.read = true;  // the input is in the receive buffer
  if (n.null_neighbors) sides->recv.read = true;  // blocks no neighbor writes keep their bytes
  sides->send_type = sides->recv_type = kByteType;
  sides->sendbuf = c.sendbuf;
  sides->recvbuf = c.recvbuf;
  return {};
}

BlockCall keep_arrays(const BlockCall& c, const BlockCounts& n, ArrayCopies* copies) {
  const int sends = c.sendbuf == MPI_IN_PLACE ? 0 : n.sends;
  BlockCall kept = c;
  kept.sendcounts = copies->keep(c.sendcounts, sends);
  kept.sdispls = copies->keep(c.sdispls, sends);
  kept.sendtypes = copies->keep(c.sendtypes, sends);
  kept.recvcounts = copies->keep(c.recvcounts, n.receives);
  kept.rdispls = copies->keep(c.rdispls, n.receives);
  kept.recvtypes = copies->keep(c.recvtypes, n.receives);
  return kept;
}

}  // namespace mcrp
