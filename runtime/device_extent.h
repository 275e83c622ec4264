// MCRPMPI_VERIFY=1 also checks that a device buffer holds what the call says it does: the byte span
// its blocks cover (runtime/buffer.h) must lie inside the device allocation that holds its base
// (device::allocation_range). A count larger than the buffer would otherwise have NCCL or a staging
// copy read or write past it -- a CUDA "illegal address" that ends the process, or a neighbour's
// data overwritten without a word. Off by default: it costs one driver query per device buffer.
#pragma once
#include "device/cuda_runtime.h"
#include "device/status.h"
#include "runtime/buffer.h"

namespace mcrp {

// MPI_ERR_BUFFER, with the span and the allocation in its text, when the side reaches outside the
// allocation; success when `memory` is host memory or no allocation is known for the base.
Status check_device_extent(const BufferSide& side, const TypeInfo& type, const device::PointerInfo& memory);

}  // namespace mcrp
