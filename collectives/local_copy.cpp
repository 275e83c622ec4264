// One-rank communicators: NCCL would allocate hundreds of MiB to do a copy, so the library does the
// copy itself. For every collective on one rank the result is the input (block 0 of the send side
// lands in block 0 of the receive side); exscan leaves the receive buffer undefined, and in-place
// forms already hold the result.
#include "collectives/paths.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"

namespace mcrp {

Status run_local_copy(const Prepared& p) {
  const BufferSide& send = p.layout.send;
  const BufferSide& recv = p.layout.recv;
  if (p.call->kind == CollKind::exscan || !send.significant() || !recv.written) return {};
  if (send.blocks.empty() || recv.blocks.empty()) return {};
  const std::size_t bytes = static_cast<std::size_t>(send.blocks[0].count * p.send_type.size);
  if (bytes == 0) return {};
  const char* from = send.base + send.blocks[0].displacement * p.send_type.extent;
  char* to = recv.base + recv.blocks[0].displacement * p.recv_type.extent;
  cudaStream_t stream = nullptr;
  profile::StepTimer copying(profile::Step::queue);
  device::DeviceGuard on_device(p.device);  // the wait's event must be on the stream's device
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MCRP_TRY(device::copy_async(to, from, bytes, stream, "cudaMemcpyAsync"));
  MpiProgress progress("a local device copy");
  return device::wait_stream(stream, progress);
}

}  // namespace mcrp
