#include "collectives/layout.h"

#include <algorithm>
#include <limits>
#include <string>

namespace mcrp {
namespace {

BlockList single(MPI_Count count) { return {Block{0, count}}; }

// `ranks` blocks of `count` elements, block i at i*count: the per-rank slots of uniform collectives.
BlockList per_rank(int ranks, MPI_Count count) {
  BlockList blocks;
  blocks.reserve(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) blocks.push_back(Block{i * count, count});
  return blocks;
}

// Sets *missing (and gives no blocks) when an array is NULL: MPICH 4.0.2 dereferences it and crashes.
BlockList per_rank(int ranks, const CountArray& counts, const CountArray& displs, bool* missing) {
  if (!counts.present() || !displs.present()) {
    *missing = true;
    return {};
  }
  BlockList blocks;
  blocks.reserve(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) blocks.push_back(Block{displs[i], counts[i]});
  return blocks;
}

BufferSide input(const void* base, MPI_Datatype type, BlockList blocks) {
  BufferSide side;
  side.base = static_cast<char*>(const_cast<void*>(base));
  side.type = type;
  side.blocks = std::move(blocks);
  side.read = true;
  return side;
}

// The receive side; `also_read` for MPI_IN_PLACE, where the input lives in the receive buffer.
BufferSide output(void* base, MPI_Datatype type, BlockList blocks, bool also_read) {
  BufferSide side;
  side.base = static_cast<char*>(base);
  side.type = type;
  side.blocks = std::move(blocks);
  side.written = true;
  side.read = also_read;
  return side;
}

// Saturates instead of overflowing (large-count arrays of bad input): validation then refuses the
// sum as too large.
MPI_Count sum(const CountArray& counts, int ranks) {
  MPI_Count total = 0;
  for (int i = 0; i < ranks; ++i) {
    if (__builtin_add_overflow(total, counts[i], &total)) return std::numeric_limits<MPI_Count>::max();
  }
  return total;
}

}  // namespace

bool participant_of(MPI_Comm comm, Participant* out) {
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || PMPI_Comm_rank(comm, &out->rank) != MPI_SUCCESS) {
    return false;
  }
  PMPI_Comm_size(comm, &out->size);
  out->inter = inter != 0;
  out->peers = out->size;
  if (out->inter) PMPI_Comm_remote_size(comm, &out->peers);
  return true;
}

Role role_of(const CollCall& c, const Participant& self) {
  if (!is_rooted(c.kind)) return Role::member;
  if (!self.inter) return self.rank == c.root ? Role::root : Role::member;
  if (c.root == MPI_ROOT) return Role::root;
  return c.root == MPI_PROC_NULL ? Role::bystander : Role::member;
}

Layout layout_of(const CollCall& c, const Participant& self) {
  Layout l;
  // MPI forbids MPI_IN_PLACE on an intercommunicator: there it is no in-place call but a send
  // buffer at MPI_IN_PLACE, which check_in_place reports.
  const bool in_place = c.in_place() && !self.inter;
  const Role role = role_of(c, self);
  const bool root = role == Role::root;
  const bool member = role == Role::member;
  // Reduce, gather(v), scatter(v): on an intracommunicator the root's own contribution or share
  // travels through its buffers too (unless MPI_IN_PLACE); on an intercommunicator the root's group
  // only receives (reduce, gather) or only sends (scatter).
  const bool root_own_block = root && !self.inter;
  const int peers = self.peers;
  switch (c.kind) {
    case CollKind::allreduce:
    case CollKind::scan:
    case CollKind::exscan:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), in_place);
      break;
    case CollKind::reduce:
      if (member || (root_own_block && !in_place)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (root) l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), in_place);
      break;
    case CollKind::bcast:
      if (root) l.recv = input(c.recvbuf, c.recvtype, single(c.recvcount));
      if (member) l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      break;
    case CollKind::allgather:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcount), in_place);
      break;
    case CollKind::allgatherv:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcounts, c.rdispls, &l.missing_array), in_place);
      break;
    case CollKind::alltoall:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, per_rank(peers, c.sendcount));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcount), in_place);
      break;
    case CollKind::alltoallv:
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, per_rank(peers, c.sendcounts, c.sdispls, &l.missing_array));
      l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcounts, c.rdispls, &l.missing_array), in_place);
      break;
    case CollKind::gather:
      if (member || (root_own_block && !in_place)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (root) l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcount), in_place);
      break;
    case CollKind::gatherv:
      if (member || (root_own_block && !in_place)) l.send = input(c.sendbuf, c.sendtype, single(c.sendcount));
      if (root) l.recv = output(c.recvbuf, c.recvtype, per_rank(peers, c.recvcounts, c.rdispls, &l.missing_array), in_place);
      break;
    case CollKind::scatter:
      if (root) l.send = input(c.sendbuf, c.sendtype, per_rank(peers, c.sendcount));
      if (member || (root_own_block && c.recvbuf != MPI_IN_PLACE)) {
        l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      }
      break;
    case CollKind::scatterv:
      if (root) l.send = input(c.sendbuf, c.sendtype, per_rank(peers, c.sendcounts, c.sdispls, &l.missing_array));
      if (member || (root_own_block && c.recvbuf != MPI_IN_PLACE)) {
        l.recv = output(c.recvbuf, c.recvtype, single(c.recvcount), false);
      }
      break;
    // Reduce-scatter vectors span the local group, on an intercommunicator too (MPI 4.1, 6.10).
    case CollKind::reduce_scatter_block: {
      MPI_Count total = 0;  // saturated as sum() is: validation refuses it
      if (__builtin_mul_overflow(c.recvcount, self.size, &total)) total = std::numeric_limits<MPI_Count>::max();
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(total));
      l.recv = output(c.recvbuf, c.recvtype, single(in_place ? total : c.recvcount), in_place);
      break;
    }
    case CollKind::reduce_scatter: {
      if (!c.recvcounts.present()) {
        l.missing_array = true;
        break;
      }
      const MPI_Count total = sum(c.recvcounts, self.size);
      if (!in_place) l.send = input(c.sendbuf, c.sendtype, single(total));
      l.recv = output(c.recvbuf, c.recvtype, single(in_place ? total : c.recvcounts[self.rank]), in_place);
      break;
    }
    case CollKind::barrier:
      break;
  }
  return l;
}

CollCall keep_arrays(const CollCall& c, const Participant& self, ArrayCopies* copies) {
  // Exactly the arrays layout_of reads, as many entries as it reads (test_layout checks both): one
  // per peer for per-rank blocks, one per rank of the local group for reduce_scatter's counts.
  const bool in_place = c.in_place() && !self.inter;
  const bool root = role_of(c, self) == Role::root;
  int send_entries = 0, recv_entries = 0;
  switch (c.kind) {
    case CollKind::allgatherv: recv_entries = self.peers; break;
    case CollKind::alltoallv:
      send_entries = in_place ? 0 : self.peers;
      recv_entries = self.peers;
      break;
    case CollKind::gatherv: recv_entries = root ? self.peers : 0; break;
    case CollKind::scatterv: send_entries = root ? self.peers : 0; break;
    case CollKind::reduce_scatter: {  // counts only
      CollCall kept = c;
      kept.recvcounts = copies->keep(c.recvcounts, self.size);
      return kept;
    }
    default: return c;  // no arrays
  }
  CollCall kept = c;
  kept.sendcounts = copies->keep(c.sendcounts, send_entries);
  kept.sdispls = copies->keep(c.sdispls, send_entries);
  kept.recvcounts = copies->keep(c.recvcounts, recv_entries);
  kept.rdispls = copies->keep(c.rdispls, recv_entries);
  return kept;
}

Status check_counts(const Layout& layout) {
  if (layout.missing_array) return Status(MPI_ERR_ARG, "null counts or displacements array");
  for (const BufferSide* side : {&layout.send, &layout.recv}) {
    for (const Block& b : side->blocks) {
      if (b.count < 0) return Status(MPI_ERR_COUNT, "negative count");
    }
  }
  return {};
}

Status check_in_place(const Layout& layout) {
  for (const BufferSide* side : {&layout.send, &layout.recv}) {
    if (side->significant() && side->base == static_cast<const void*>(MPI_IN_PLACE)) {
      return Status(MPI_ERR_BUFFER, "MPI_IN_PLACE where MPI does not allow it");
    }
  }
  return {};
}

Status check_root(const CollCall& c, const Participant& self) {
  if (!is_rooted(c.kind)) return {};
  const bool valid = self.inter ? c.root == MPI_ROOT || c.root == MPI_PROC_NULL || (c.root >= 0 && c.root < self.peers)
                                : c.root >= 0 && c.root < self.size;
  return valid ? Status() : Status(MPI_ERR_ROOT, "invalid root " + std::to_string(c.root));
}

std::optional<std::uint64_t> agreed_bytes(const CollCall& c, const Layout& layout, const Participant& self,
                                          const TypeInfo& send_type, const TypeInfo& recv_type) {
  if (self.inter) return std::nullopt;
  const auto s = static_cast<std::uint64_t>(send_type.size);
  const auto r = static_cast<std::uint64_t>(recv_type.size);
  // Reductions and bcast have one count and one datatype, significant on every rank; the side that
  // carries it differs (reduce: the root receives, the others send).
  const std::uint64_t one_type = layout.recv.significant() ? r : s;
  const bool root = role_of(c, self) == Role::root;
  switch (c.kind) {
    case CollKind::allreduce:
    case CollKind::reduce:
    case CollKind::scan:
    case CollKind::exscan:
    case CollKind::bcast:
    case CollKind::reduce_scatter_block:
      return static_cast<std::uint64_t>(c.recvcount) * one_type;
    case CollKind::allgather:
    case CollKind::alltoall:
      return static_cast<std::uint64_t>(c.recvcount) * r;
    case CollKind::gather: return static_cast<std::uint64_t>(root ? c.recvcount * r : c.sendcount * s);
    case CollKind::scatter: return static_cast<std::uint64_t>(root ? c.sendcount * s : c.recvcount * r);
    case CollKind::reduce_scatter: return static_cast<std::uint64_t>(sum(c.recvcounts, self.size)) * r;
    case CollKind::allgatherv: {
      // The mean block, rounded up: fewer bytes than ranks must not read as nothing to move (the
      // route hands a zero-size call's device pointers to the base MPI as they are).
      const auto ranks = static_cast<std::uint64_t>(self.size);
      return (static_cast<std::uint64_t>(sum(c.recvcounts, self.size)) * r + ranks - 1) / ranks;
    }
    case CollKind::barrier: return 0;
    case CollKind::alltoallv:
    case CollKind::gatherv:
    case CollKind::scatterv:
      break;
  }
  return std::nullopt;
}

}  // namespace mcrp
