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
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(side.type, &lb, &extent);
  MPI_Count unit = 0;
  PMPI_Type_size_c(side.type, &unit);
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    char* element = image_base + b.displacement * extent;
    // Unpacking stops with the packed bytes (a shorter message), at a unit boundary.
    const MPI_Count units = unpack && unit > 0 ? std::min(b.count, (static_cast<MPI_Count>(packed_size) - position) / unit)
                                               : b.count;
    if (units <= 0) break;
    const int rc = unpack ? PMPI_Unpack_c(packed, static_cast<MPI_Count>(packed_size), &position, element,
                                          units, side.type, self)
                          : PMPI_Pack_c(element, b.count, side.type, packed, static_cast<MPI_Count>(packed_size),
                                        &position, self);
    if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "packing a non-contiguous datatype failed");
  }
  return {};
}

Status complete_partial_unit(const BufferSide& side, MPI_Count type_size, char* image_base, char* packed,
                             std::size_t delivered, std::size_t* packed_size) {
  *packed_size = delivered;
  const auto unit = static_cast<std::size_t>(type_size);
  if (unit == 0 || delivered % unit == 0) return {};
  const MPI_Comm self = library_self_comm();
  if (self == MPI_COMM_NULL) return Status(MPI_ERR_OTHER, "MPI is not initialized");
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(side.type, &lb, &extent);
  // The block and the unit within it where the delivered bytes end.
  std::size_t block_start = 0;
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    const std::size_t block_bytes = static_cast<std::size_t>(b.count) * unit;
    if (delivered < block_start + block_bytes) {
      const std::size_t in_block = (delivered - block_start) / unit;
      char* element = image_base + (b.displacement + static_cast<MPI_Aint>(in_block)) * extent;
      std::vector<char> present(unit);
      MPI_Count position = 0;
      if (PMPI_Pack_c(element, 1, side.type, present.data(), type_size, &position, self) != MPI_SUCCESS) {
        return Status(MPI_ERR_TYPE, "packing a non-contiguous datatype failed");
      }
      const std::size_t unit_start = block_start + in_block * unit;
      const std::size_t filled = delivered - unit_start;
      std::memcpy(packed + delivered, present.data() + filled, unit - filled);
      *packed_size = unit_start + unit;
      return {};
    }
    block_start += block_bytes;
  }
  return {};  // past every block: nothing to complete
}

}  // namespace mcrp
