// MPI_Pack/MPI_Unpack of a buffer side's blocks between a host image of its span and a packed byte
// stream (the blocks one after another, each as its datatype's type signature). Used where device
// data of a non-contiguous datatype must travel as plain bytes: NCCL (device_view.h) and the
// pipelined staged path's byte chunks (collectives/staged_pipeline.h).
#pragma once
#include <mpi.h>

#include <cstddef>

#include "device/status.h"
#include "runtime/buffer.h"

namespace mcrp {

// `image_base` plays the role of side.base (the span's image minus span.lo). Packs into `packed`, or
// unpacks from it when `unpack`.
Status pack_blocks(const BufferSide& side, char* image_base, char* packed, std::size_t packed_size, bool unpack);

// For a receive that delivered `delivered` packed bytes, ending inside a datatype unit: fills the
// rest of that unit in `packed` with the unit's present values, packed from the image, and returns
// the packed size up to the unit's end. Unpacking that many bytes writes the delivered elements
// and rewrites the others unchanged, with MPI_Unpack of whole units only (MPI defines no unpacking
// of part of one). `delivered` at a unit boundary returns itself.
Status complete_partial_unit(const BufferSide& side, MPI_Count type_size, char* image_base, char* packed,
                             std::size_t delivered, std::size_t* packed_size);

}  // namespace mcrp
