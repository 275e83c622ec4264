// The library's copy streams (three per device, for copies not tied to an NCCL communicator:
// staging, one-rank copies, point-to-point) and how any library stream is ordered after the
// application's work. Library streams are non-blocking (device/handles.h), so the application's
// later default-stream work never waits for them; the application's earlier work is waited for
// explicitly, at the point where a call first uses a stream.
#pragma once
#include <cuda_runtime_api.h>

#include "device/cuda_runtime.h"
#include "device/status.h"
#include "device/wait.h"

namespace mcrp::device {

// Work issued on `stream` from now on starts after the work already issued on `device`'s legacy
// default stream (where plain CUDA code, CuPy and PyTorch put their work unless told otherwise).
// One cudaStreamQuery when that stream is idle; otherwise one event recorded on it and waited for
// on `stream`, both asynchronous. Work on the application's other streams is not seen (docs/routing.md, "Streams").
Status order_after_legacy_stream(int device, cudaStream_t stream);

// For memory at `where` that a stream of device `stream_device` (already ordered after its own
// device's legacy stream) reads or writes: device memory on another GPU has `stream` wait for that
// GPU's legacy stream too. Nothing for host memory or memory on the stream's own device.
inline Status order_after_memory_device(const PointerInfo& where, int stream_device, cudaStream_t stream) {
  if (where.kind != MemoryKind::device || where.device == stream_device) return {};  // the usual case
  return order_after_legacy_stream(where.device, stream);
}

// The copy stream of `device`, created on first use and ordered as above at every call, so the
// call's copies read and write the user's buffers only after the application's earlier work.
Status copy_stream(int device, cudaStream_t* stream);
// Returns once the work issued so far on `device`'s legacy default stream is done, running `hook`
// meanwhile (a wait on the copy stream): before a CUDA-aware base MPI is handed device memory that
// work may still read or write.
Status wait_for_legacy_stream(int device, ProgressHook& hook);
// A second such stream, for copies back to the device that should overlap with copies on
// copy_stream (a GPU copies both directions at once); the pipelined staged path uses it.
Status copy_back_stream(int device, cudaStream_t* stream);
// A third stream of `device`, never ordered, for a call's finishing copies whose inputs the host
// has already seen complete (a nonblocking collective's unpacking): on the NCCL communicator's
// stream they would wait for later NCCL work issued meanwhile, and on an ordered stream for the
// application's later work.
Status finishing_stream(int device, cudaStream_t* stream);

}  // namespace mcrp::device
