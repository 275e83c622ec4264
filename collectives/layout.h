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

#include "collectives/array_copies.h"
#include "collectives/call.h"
#include "device/status.h"
#include "runtime/buffer.h"

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

struct Layout {
  BufferSide send;  // read only
  BufferSide recv;  // written; also read with MPI_IN_PLACE (and for bcast at the root)
  bool missing_array = false;  // a significant counts or displacements array is NULL
};

Layout layout_of(const CollCall& call, const Participant& self);
// Intracommunicator shorthand.
inline Layout layout_of(const CollCall& call, int rank, int size) {
  return layout_of(call, Participant::intra(rank, size));
}

// `call` with every counts and displacements array this rank reads replaced by a copy in `copies`
// (collectives/array_copies.h), so that it describes the same layout after the caller's arrays are
// gone; arrays MPI ignores on this rank stay as they came. Reads what layout_of reads.
CollCall keep_arrays(const CollCall& call, const Participant& self, ArrayCopies* copies);

// A NULL significant counts or displacements array (MPI_ERR_ARG), a negative count among the
// significant arguments (MPI_ERR_COUNT), else ok.
Status check_counts(const Layout& layout);

// MPI_IN_PLACE where MPI forbids it (MPI_ERR_BUFFER): as both buffers, as bcast's buffer, off the
// root of reduce, gather(v) and scatter(v), on the wrong side at the root, on an intercommunicator.
// Every such use leaves a significant side based at MPI_IN_PLACE.
Status check_in_place(const Layout& layout);

// An invalid root for the communicator (MPI_ERR_ROOT), else ok; unrooted collectives ignore root.
Status check_root(const CollCall& call, const Participant& self);

// The message size in bytes that every rank of the call computes alike, in OSU's per-rank
// convention (allgather: one rank's block; reduce-scatter: the whole vector), from this rank's
// significant arguments only (gather: the root's receive side, the others' send side; the type
// signatures MPI requires to match make them equal). Empty for the collectives whose ranks need
// not agree on one (alltoallv, gatherv, scatterv) and on intercommunicators.
std::optional<std::uint64_t> agreed_bytes(const CollCall& call, const Layout& layout, const Participant& self,
                                          const TypeInfo& send_type, const TypeInfo& recv_type);

}  // namespace mcrp
