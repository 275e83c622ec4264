// MCRPMPI_VERIFY=1 also checks the memory behind each significant buffer of a call, over the byte
// span the call would read or write (runtime/buffer.h: count, extent, lower bound, displacements):
//   - device memory: the span lies inside the device allocation that holds the buffer's base
//     (device::allocation_range). A count larger than the buffer would otherwise have NCCL or a
//     staging copy run past it: a CUDA illegal-address error that ends the process, or a
//     neighbour's data overwritten without a word.
//   - host memory: the span is mapped in this process. A pointer that is not -- a device pointer
//     of another process, which no query of this process knows, or memory already unmapped --
//     would crash the base MPI.
// Off by default: it costs one driver query per device buffer and one system call per host buffer
// outside the lasting host regions (device/host_regions.h).
#pragma once
#include "device/cuda_runtime.h"
#include "device/status.h"
#include "runtime/buffer.h"
#include "runtime/staged_sides.h"

namespace mcrp {

// MPI_ERR_BUFFER, with the span (and the allocation) in its text, when the side's memory does not
// hold its span; success for a side that is not significant or covers no bytes, and for device
// memory of no known allocation.
Status check_buffer_memory(const BufferSide& side, const TypeInfo& type, const device::PointerInfo& memory);

// Both sides of a staged call (runtime/staged_sides.h), each looked up at the first byte it reaches.
Status check_buffer_memory(const StagedSides& sides);

}  // namespace mcrp
