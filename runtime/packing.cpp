#include "runtime/packing.h"

namespace mcrp {

Status pack_blocks(const BufferSide& side, char* image_base, char* packed, std::size_t packed_size, bool unpack) {
  MPI_Count position = 0;
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(side.type, &lb, &extent);
    char* element = image_base + b.displacement * extent;
    const int rc = unpack ? PMPI_Unpack_c(packed, static_cast<MPI_Count>(packed_size), &position, element,
                                          b.count, side.type, MPI_COMM_SELF)
                          : PMPI_Pack_c(element, b.count, side.type, packed, static_cast<MPI_Count>(packed_size),
                                        &position, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "packing a non-contiguous datatype failed");
  }
  return {};
}

}  // namespace mcrp
