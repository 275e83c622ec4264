// Which buffers a collective touches on this rank, and where: the blocks of each side in units of
// its datatype's extent, and whether the side is read, written or both. Staging, packing and the
// memory-type check all work from this one description, so the per-collective rules on root-only
// buffers and MPI_IN_PLACE live here and nowhere else.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "collectives/call.h"
#include "device/status.h"

namespace mcrp {

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

// rank and size are this rank's in call.comm.
Layout layout_of(const CollCall& call, int rank, int size);

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

// The byte range [lo, hi) relative to side.base that the side's blocks cover (empty when lo == hi).
struct Span {
  std::ptrdiff_t lo = 0;
  std::ptrdiff_t hi = 0;
  std::size_t bytes() const { return static_cast<std::size_t>(hi - lo); }
};
Span span_of(const BufferSide& side, const TypeInfo& type);

}  // namespace mcrp
