// A buffer as MPI describes it -- base address, datatype, blocks of elements -- and its geometry:
// the byte span it covers and whether its elements are plain bytes. Collectives build these from
// their layouts (collectives/layout.h), point-to-point from its one buffer per side; staging,
// packing and memory-kind checks work on them alike.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/status.h"
#include "runtime/block_list.h"
#include "runtime/mpich_handles.h"

namespace mcrp {

struct BufferSide {
  char* base = nullptr;  // null when the side is not significant on this rank
  MPI_Datatype type = MPI_DATATYPE_NULL;
  BlockList blocks;
  bool read = false;
  bool written = false;

  bool significant() const { return base != nullptr || read || written; }
  MPI_Count total_count() const;
};

// Datatype geometry from the base MPI.
struct TypeInfo {
  MPI_Count size = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  // The bytes lie in the order of the type signature (asked only of gap-free types, the only ones
  // whose contiguity it decides): a gap-free type may still list its blocks out of address order.
  bool ordered = true;
  // Elements abut with no gaps, start at offset 0 and lie in signature order: a buffer of n elements
  // is n*size plain bytes that a peer may read with any type of the same signature.
  bool contiguous() const { return ordered && size == extent && size == true_extent && true_lb == 0; }
};
// MPI_BYTE's geometry, without asking: the type of sides described as plain bytes.
inline constexpr TypeInfo kByteType{1, 1, 0, 1, true};

// MPI_ERR_TYPE for MPI_DATATYPE_NULL and other handles that are no datatype.
Status type_info(MPI_Datatype type, TypeInfo* info);

// An uncommitted derived datatype (predefined ones pass without a query). MPI has no query for
// that, but MPI_Pack_size refuses one, raising MPI_ERR_TYPE on `comm` as the base MPI's own call
// with it would: the returned Status is that error, already raised.
Status check_committed(MPI_Datatype type, MPI_Comm comm);

// A significant side whose blocks cannot exist: a byte offset or length past 2^63 (MPI_ERR_COUNT),
// or a null base with data to move (MPI_ERR_BUFFER; as the base MPI's own check, not for types with
// an absolute lower bound, which address from MPI_BOTTOM == NULL).
Status check_side(const BufferSide& side, const TypeInfo& type);

// Counts from this many elements up are checked for overflow; below it no datatype's extent (up
// to 2^39 bytes) can make count * extent pass 2^63, so callers skip the datatype queries.
inline constexpr MPI_Count kCheckedCount = MPI_Count{1} << 24;

// The byte range [lo, hi) relative to side.base that the side's blocks cover (empty when lo == hi).
struct Span {
  std::ptrdiff_t lo = 0;
  std::ptrdiff_t hi = 0;
  std::size_t bytes() const { return static_cast<std::size_t>(hi - lo); }
};
Span span_of(const BufferSide& side, const TypeInfo& type);

// The base that a copy of a span starting at `span_start` stands for: span_start - lo, the address
// MPI and the packing code add the blocks' offsets to. Computed on integers: it usually lies outside
// the copy's allocation (before it, or past zero for a span far from its base), where pointer
// arithmetic is undefined behaviour (UBSan's pointer-overflow check found it so, 2026-12-01).
inline char* span_base(char* span_start, std::ptrdiff_t lo) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(span_start) - static_cast<std::uintptr_t>(lo));
}

// Where a significant side's memory kind is to be looked up. A predefined datatype's data starts at
// the base's element, inside the base's allocation; a derived one may start anywhere: absolute
// addresses from MPI_BOTTOM (NULL), a lower bound or displacements reaching into an allocation the
// base is not in. Then the first byte its blocks reach (a datatype query; none for predefined types,
// inline: every device call classifies its sides).
const char* first_reached_byte(const BufferSide& side);
inline const char* memory_probe_address(const BufferSide& side) {
  return is_builtin_handle(side.type) ? side.base : first_reached_byte(side);
}

// True when writing the side's blocks overwrites its whole span, so a copy of it need not be filled
// first to keep the bytes between blocks (holes in a derived datatype, gaps between displacements).
bool covers_span(const BufferSide& side, const TypeInfo& type, const Span& span);

}  // namespace mcrp
