// MPI_Pack/MPI_Unpack of a buffer side's blocks between a host image of its span and a packed byte
// stream (the blocks one after another, each as its datatype's type signature). Used where device
// data of a non-contiguous datatype must travel as plain bytes: NCCL (device_view.h) and the
// pipelined staged path's byte chunks (collectives/staged_pipeline.h).
#pragma once
#include <cstddef>

#include "device/status.h"
#include "runtime/buffer.h"

namespace mcrp {

// `image_base` plays the role of side.base (the span's image minus span.lo). Packs into `packed`, or
// unpacks from it when `unpack`; unpacking fewer bytes than the blocks hold (a shorter message)
// writes only the elements they reach, the others keeping the image's values.
Status pack_blocks(const BufferSide& side, char* image_base, char* packed, std::size_t packed_size, bool unpack);

}  // namespace mcrp
