#include "collectives/layout.h"

#include <algorithm>
#include <string>

namespace mcrp {
namespace {

std::vector<Block> single(MPI_Count count) { return {Block{0, count}}; }

// size blocks of `count` elements, block i at i*count: the per-rank slots of uniform collectives.
std::vector<Block> per_rank(int size, MPI_Count count) {
  std::vector<Block> blocks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) blocks[i] = Block{i * count, count};
  return blocks;
}

std::vector<Block> per_rank(int size, const CountArray& counts, const CountArray& displs) {
  std::vector<Block> blocks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) blocks[i] = Block{displs[i], counts[i]};
  return blocks;
}

BufferSide input(const void* base, MPI_Datatype type, std::vector<Block> blocks) {
  BufferSide side;
  side.base = static_cast<char*>(const_cast<void*>(base));
  side.type = type;
  side.blocks = std::move(blocks);
  side.read = true;
  return side;
}

// The receive side; `also_read` for MPI_IN_PLACE, where the input lives in the receive buffer.
BufferSide output(void* base, MPI_Datatype type, std::vector<Block> blocks, bool also_read) {
  BufferSide side;
  side.base = static_cast<char*>(base);
  side.type = type;
  side.blocks = std::move(blocks);
  side.written = true;
  side.read = also_read;
  return side;
}

MPI_Count sum(const CountArray& counts, int size) {
  MPI_Count total = 0;
  for (int i = 0; i < size; ++i) total += counts[i];
  return total;
}

}  // namespace

MPI_Count BufferSide::total_count() const {
  MPI_Count total = 0;
  for (const Block& b : blocks) total += b.count;
  return total;
}

Layout layout_of(const CollCall& c, int rank, int size) {
  Layout l;
  const bool in_place = c.in_place();
  const bool at_root = rank == c.root;
  switch (c.kind) {
    case CollKind::allreduce:
    case CollKind::scan:
    case CollKind::exscan:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), in_place);
      break;
    case CollKind::reduce:
      if (!(in_place && at_root)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (at_root) l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), in_place);
      break;
    case CollKind::bcast:
      if (at_root) {
        l.recv = input(c.recvbuf, c.recvtype, single(c.recvcount));
      } else {
        l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      }
      break;
    case CollKind::allgather:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcount), in_place);
      break;
    case CollKind::allgatherv:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcounts, c.rdispls), in_place);
      break;
    case CollKind::alltoall:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, per_rank(size, c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcount), in_place);
      break;
    case CollKind::alltoallv:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, per_rank(size, c.sendcounts, c.sdispls));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcounts, c.rdispls), in_place);
      break;
    case CollKind::gather:
      if (!(in_place && at_root)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (at_root) l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcount), in_place);
      break;
    case CollKind::gatherv:
      if (!(in_place && at_root)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (at_root) l.recv = output(c.recvbuf, c.recvtype, per_rank(size, c.recvcounts, c.rdispls), in_place);
      break;
    case CollKind::scatter:
      if (at_root) l.send = input(c.sendbuf, c.sendtype, per_rank(size, c.sendcount));
      if (!(c.recvbuf == MPI_IN_PLACE && at_root)) l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      break;
    case CollKind::scatterv:
      if (at_root) l.send = input(c.sendbuf, c.sendtype, per_rank(size, c.sendcounts, c.sdispls));
      if (!(c.recvbuf == MPI_IN_PLACE && at_root)) l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      break;
    case CollKind::reduce_scatter_block: {
      const MPI_Count total = c.recvcount * size;
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(total));
      l.recv = output(c.recvbuf, c.recvtype, single(in_place ? total : c.recvcount), in_place);
      break;
    }
    case CollKind::reduce_scatter: {
      const MPI_Count total = sum(c.recvcounts, size);
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(total));
      l.recv = output(c.recvbuf, c.recvtype, single(in_place ? total : c.recvcounts[rank]), in_place);
      break;
    }
    case CollKind::barrier:
      break;
  }
  return l;
}

Status type_info(MPI_Datatype type, TypeInfo* info) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int rc = PMPI_Type_size_x(type, &info->size);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_extent_x(type, &lb, &extent);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "invalid datatype");
  info->extent = extent;
  info->true_lb = true_lb;
  info->true_extent = true_extent;
  return {};
}

Span span_of(const BufferSide& side, const TypeInfo& type) {
  Span span;
  bool first = true;
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    const std::ptrdiff_t lo = b.displacement * type.extent + type.true_lb;
    const std::ptrdiff_t hi = lo + (b.count - 1) * type.extent + type.true_extent;
    span.lo = first ? lo : std::min(span.lo, lo);
    span.hi = first ? hi : std::max(span.hi, hi);
    first = false;
  }
  return span;
}

}  // namespace mcrp
