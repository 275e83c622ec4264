// The staged path: what NCCL cannot do on device buffers still runs, on the base MPI, through
// pinned host copies (this is what makes a non-CUDA-aware base MPI CUDA-aware).
#include "collectives/errors.h"
#include "collectives/paths.h"
#include "collectives/progress.h"
#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/ordered_streams.h"

namespace mcrp {
namespace {

// One side's host image: pinned copy of a device span, or the side itself when it is host memory.
struct HostImage {
  device::Buffer pinned;
  Span span;
  bool staged = false;
  char* base = nullptr;  // what the base MPI gets in place of side.base
};

// True when writing the side's blocks overwrites its whole span, so no copy-in is needed to keep
// the bytes between blocks (holes in a derived datatype, gaps between displacements).
bool fills_span(const BufferSide& side, const TypeInfo& type, const Span& span) {
  return type.contiguous() &&
         static_cast<std::size_t>(side.total_count() * type.size) == span.bytes();
}

Status stage_in(const BufferSide& side, const TypeInfo& type, cudaStream_t stream, HostImage* image) {
  image->base = side.base;
  if (!side.significant()) return {};
  image->span = span_of(side, type);
  if (image->span.bytes() == 0) return {};
  const char* device_start = side.base + image->span.lo;
  if (device::locate(device_start).kind != device::MemoryKind::device) return {};
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, image->span.bytes(), image->pinned));
  image->staged = true;
  image->base = image->pinned.data() - image->span.lo;
  if (side.read || !fills_span(side, type, image->span)) {
    MCRP_TRY(device::cuda_status(cudaMemcpyAsync(image->pinned.data(), device_start, image->span.bytes(),
                                                 cudaMemcpyDeviceToHost, stream),
                                 "cudaMemcpyAsync (device to host)"));
  }
  return {};
}

Status stage_out(const BufferSide& side, const HostImage& image, cudaStream_t stream) {
  if (!image.staged || !side.written) return {};
  return device::cuda_status(cudaMemcpyAsync(side.base + image.span.lo, image.pinned.data(), image.span.bytes(),
                                             cudaMemcpyHostToDevice, stream),
                             "cudaMemcpyAsync (host to device)");
}

// The buffer argument for the base MPI: the host image when the side is significant, else the
// caller's own argument (MPI_IN_PLACE, or a pointer MPI ignores on this rank).
const void* send_argument(const Prepared& p, const HostImage& image) {
  return p.layout.send.significant() ? image.base : p.call->sendbuf;
}
void* recv_argument(const Prepared& p, const HostImage& image) {
  return p.layout.recv.significant() ? image.base : p.call->recvbuf;
}

}  // namespace

Status run_staged(const Prepared& p, const BaseCall& base, bool copy) {
  cudaStream_t stream = nullptr;
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MpiProgress progress;
  if (!copy) {  // CUDA-aware base MPI: only make prior device work visible first
    MCRP_TRY(device::wait_stream(stream, progress));
    const int rc = base(p.call->sendbuf, p.call->recvbuf);
    return rc == MPI_SUCCESS ? Status() : already_raised(rc);
  }
  HostImage send, recv;
  MCRP_TRY(stage_in(p.layout.send, p.send_type, stream, &send));
  MCRP_TRY(stage_in(p.layout.recv, p.recv_type, stream, &recv));
  MCRP_TRY(device::wait_stream(stream, progress));
  const int rc = base(send_argument(p, send), recv_argument(p, recv));
  if (rc != MPI_SUCCESS) return already_raised(rc);
  MCRP_TRY(stage_out(p.layout.recv, recv, stream));
  return device::wait_stream(stream, progress);
}

}  // namespace mcrp
