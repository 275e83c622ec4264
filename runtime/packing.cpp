#include "runtime/packing.h"

#include "runtime/self_comm.h"

namespace mcrp {

Status pack_blocks(const BufferSide& side, char* image_base, char* packed, std::size_t packed_size, bool unpack) {
  MPI_Count position = 0;
  const MPI_Comm self = library_self_comm();  // MPI_COMM_SELF is not there in a Sessions-only program
  if (self == MPI_COMM_NULL) return Status(MPI_ERR_OTHER, "MPI is not initialized");
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(side.type, &lb, &extent);
    char* element = image_base + b.displacement * extent;
    const int rc = unpack ? PMPI_Unpack_c(packed, static_cast<MPI_Count>(packed_size), &position, element,
                                          b.count, side.type, self)
                          : PMPI_Pack_c(element, b.count, side.type, packed, static_cast<MPI_Count>(packed_size),
                                        &position, self);
    if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "packing a non-contiguous datatype failed");
  }
  return {};
}

}  // namespace mcrp
