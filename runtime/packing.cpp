#include "runtime/packing.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/self_comm.h"

namespace mcrp {

Status pack_blocks(const BufferSide& side, char* image_base, char* packed, std::size_t packed_size, bool unpack) {
  MPI_Count position = 0;
  const MPI_Comm self = library_self_comm();  // MPI_COMM_SELF is not there in a Sessions-only program
  if (self == MPI_COMM_NULL) return Status(MPI_ERR_OTHER, "MPI is not initialized");
  const auto failed = [] { return Status(MPI_ERR_TYPE, "packing a non-contiguous datatype failed"); };
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(side.type, &lb, &extent);
  MPI_Count unit = 0;
  PMPI_Type_size_c(side.type, &unit);
  const auto size = static_cast<MPI_Count>(packed_size);
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    char* element = image_base + b.displacement * extent;
    if (!unpack) {
      if (PMPI_Pack_c(element, b.count, side.type, packed, size, &position, self) != MPI_SUCCESS) return failed();
      continue;
    }
    // A shorter message stops inside the blocks: its whole units first.
    const MPI_Count units = unit > 0 ? std::min(b.count, (size - position) / unit) : b.count;
    if (units > 0 && PMPI_Unpack_c(packed, size, &position, element, units, side.type, self) != MPI_SUCCESS) {
      return failed();
    }
    if (units == b.count) continue;
    // Then the unit it ends in, if any: MPI defines no unpacking of part of a unit, so the unit is
    // packed from the image (the user's present values), the bytes that arrived laid over its
    // first ones, and unpacked whole; the elements the message did not reach keep their values.
    const MPI_Count arrived = size - position;
    if (arrived > 0) {
      std::vector<char> whole(static_cast<std::size_t>(unit));
      char* last = element + units * extent;
      MPI_Count at = 0;
      if (PMPI_Pack_c(last, 1, side.type, whole.data(), unit, &at, self) != MPI_SUCCESS) return failed();
      std::memcpy(whole.data(), packed + position, static_cast<std::size_t>(arrived));
      at = 0;
      if (PMPI_Unpack_c(whole.data(), unit, &at, last, 1, side.type, self) != MPI_SUCCESS) return failed();
    }
    break;
  }
  return {};
}

}  // namespace mcrp
