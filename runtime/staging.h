// Staging: a device buffer side seen by the base MPI as pinned host memory. stage_in makes the host
// image (copying the device bytes in when the side is read, or when writing it would not overwrite
// all of its span); the base MPI works on the image; stage_out copies what it wrote back. Host-memory
// sides are their own image. Copies are issued on a stream; the caller waits for them (keeping MPI
// progressing) before the base MPI reads the image or before it reports completion.
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>

#include "device/buffer_pool.h"
#include "runtime/buffer.h"

namespace mcrp {

struct HostImage {
  device::Buffer pinned;
  Span span;
  bool staged = false;   // a pinned copy of device memory (else the side's own memory)
  char* base = nullptr;  // what the base MPI gets in place of side.base
};

// `stream` is a copy stream of device `stream_device`, ordered after that device's legacy default
// stream; a side on another GPU has the stream wait for that GPU's too.
Status stage_in(const BufferSide& side, const TypeInfo& type, cudaStream_t stream, int stream_device,
                HostImage* image);
// The whole span of a written side back to the device.
Status stage_out(const BufferSide& side, const HostImage& image, cudaStream_t stream);
// Only what a received message of `bytes` bytes wrote into a one-block receive side (a receive may
// deliver less than the buffer holds; the bytes after it keep their device contents).
Status stage_out_received(const BufferSide& side, const TypeInfo& type, const HostImage& image, MPI_Count bytes,
                          cudaStream_t stream);

}  // namespace mcrp
