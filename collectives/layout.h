// Which arguments of a collective are significant on this rank, and what they describe: the blocks
// of each buffer side in units of its datatype's extent, and whether the side is read, written or
// both. Validation, memory-kind detection, routing, staging and packing all work from this one
// description, so the standard's per-collective rules on root-only arguments, MPI_IN_PLACE and
// intercommunicators (MPI_ROOT, MPI_PROC_NULL, the remote group) live here and nowhere else.
//
// An argument that is not significant may be anything (-1, MPI_DATATYPE_NULL, NULL, a dangling
// pointer): nothing outside this file reads it, and an insignificant side has no base, type or
// blocks at all.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/call.h"
#include "device/status.h"

namespace mcrp {

// Where this rank stands in the call's communicator.
struct Participant {
  int rank = 0;        // in the local group
  int size = 1;        // of the local group
  int peers = 1;       // ranks that per-rank blocks go to or come from: the remote group's size on an
                       // intercommunicator, else `size`
  bool inter = false;

  static Participant intra(int rank, int size) { return Participant{rank, size, size, false}; }
};

// Rank, sizes and kind of `comm`; false when it is not a valid communicator.
bool participant_of(MPI_Comm comm, Participant* out);

// The part a rank plays in a rooted collective.
enum class Role {
  root,       // the root: intracommunicator rank == root, or MPI_ROOT on an intercommunicator
  member,     // sends to or receives from the root (every rank of unrooted collectives)
  bystander,  // MPI_PROC_NULL: the root's group of an intercommunicator, apart from the root
};
Role role_of(const CollCall& call, const Participant& self);

struct Block {
  MPI_Count displacement = 0;  // in extents of the side's datatype
  MPI_Count count = 0;         // elements of the side's datatype
};

struct BufferSide {
  char* base = nullptr;  // null when the side is not significant on this rank
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::vector<Block> blocks;
  bool read = false;
  bool written = false;

  bool significant() const { return base != nullptr || read || written; }
  MPI_Count total_count() const;
};

struct Layout {
  BufferSide send;  // read only
  BufferSide recv;  // written; also read with MPI_IN_PLACE (and for bcast at the root)
};

Layout layout_of(const CollCall& call, const Participant& self);
// Intracommunicator shorthand.
inline Layout layout_of(const CollCall& call, int rank, int size) {
  return layout_of(call, Participant::intra(rank, size));
}

// A negative count among the significant arguments (MPI_ERR_COUNT), else ok.
Status check_counts(const Layout& layout);

// An invalid root for the communicator (MPI_ERR_ROOT), else ok; unrooted collectives ignore root.
Status check_root(const CollCall& call, const Participant& self);

// Datatype geometry from the base MPI.
struct TypeInfo {
  MPI_Count size = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  // Elements abut with no gaps and start at offset 0: a buffer of n elements is n*size plain bytes.
  bool contiguous() const { return size == extent && size == true_extent && true_lb == 0; }
};
Status type_info(MPI_Datatype type, TypeInfo* info);

// The message size in bytes that every rank of the call computes alike, in OSU's per-rank
// convention (allgather: one rank's block; reduce-scatter: the whole vector), from this rank's
// significant arguments only (gather: the root's receive side, the others' send side; the type
// signatures MPI requires to match make them equal). Empty for the collectives whose ranks need
// not agree on one (alltoallv, gatherv, scatterv) and on intercommunicators.
std::optional<std::uint64_t> agreed_bytes(const CollCall& call, const Layout& layout, const Participant& self,
                                          const TypeInfo& send_type, const TypeInfo& recv_type);

// The byte range [lo, hi) relative to side.base that the side's blocks cover (empty when lo == hi).
struct Span {
  std::ptrdiff_t lo = 0;
  std::ptrdiff_t hi = 0;
  std::size_t bytes() const { return static_cast<std::size_t>(hi - lo); }
};
Span span_of(const BufferSide& side, const TypeInfo& type);

// True when writing the side's blocks overwrites its whole span, so a copy of it need not be filled
// first to keep the bytes between blocks (holes in a derived datatype, gaps between displacements).
bool covers_span(const BufferSide& side, const TypeInfo& type, const Span& span);

}  // namespace mcrp
