#include "p2p/chunked_transfer.h"

#include <algorithm>

#include "device/cuda_runtime.h"
#include "device/ordered_streams.h"
#include "runtime/errors.h"

namespace mcrp {

Status ChunkedTransfer::start(const ChannelTransfer& transfer, MPI_Comm comm, std::uint64_t chunk_setting) {
  transfer_ = transfer;
  plan_ = plan_chunks(transfer.bytes, kMovementUnit, chunk_setting);
  messages_ = std::max(plan_.chunks, 1);
  device_ = std::max(device::locate(transfer.data).device, 0);
  copied_.clear();
  copied_.resize(static_cast<std::size_t>(messages_));
  requests_.assign(static_cast<std::size_t>(messages_), MPI_REQUEST_NULL);
  moved_ = 0;
  device::DeviceGuard on_device(device_);
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, transfer.bytes, host_));
  if (transfer.send) {
    MCRP_TRY(device::copy_stream(device_, &stream_));
    for (int k = 0; k < messages_; ++k) {
      const ByteRange r = plan_.chunk(k);
      MCRP_TRY(device::copy_async(host_.data() + r.lo, static_cast<const char*>(transfer.data) + r.lo, r.bytes(),
                                  stream_, "cudaMemcpyAsync (staging a point-to-point chunk)"));
      MCRP_TRY(device::record_event(stream_, copied_[k]));
    }
    return {};
  }
  MCRP_TRY(device::copy_back_stream(device_, &stream_));
  for (int k = 0; k < messages_; ++k) {
    const ByteRange r = plan_.chunk(k);
    MCRP_TRY(from_base(PMPI_Irecv_c(host_.data() + r.lo, static_cast<MPI_Count>(r.bytes()), MPI_BYTE, transfer.peer,
                                    0, comm, &requests_[k])));
  }
  return {};
}

Status ChunkedTransfer::advance(MPI_Comm comm, bool earlier_sends_handed_over, bool* done) {
  *done = false;
  device::DeviceGuard on_device(device_);
  return transfer_.send ? advance_send(comm, earlier_sends_handed_over, done) : advance_receive(done);
}

Status ChunkedTransfer::advance_send(MPI_Comm comm, bool may_hand_over, bool* done) {
  if (!may_hand_over) return {};
  for (; moved_ < messages_; ++moved_) {
    bool copied = false;
    MCRP_TRY(device::query_event(copied_[moved_].get(), &copied));
    if (!copied) return {};
    const ByteRange r = plan_.chunk(moved_);
    MCRP_TRY(from_base(PMPI_Issend_c(host_.data() + r.lo, static_cast<MPI_Count>(r.bytes()), MPI_BYTE,
                                     transfer_.peer, 0, comm, &requests_[moved_])));
  }
  int flag = 0;
  MCRP_TRY(from_base(PMPI_Testall(messages_, requests_.data(), &flag, MPI_STATUSES_IGNORE)));
  *done = flag != 0;
  return {};
}

Status ChunkedTransfer::advance_receive(bool* done) {
  for (; moved_ < messages_; ++moved_) {
    int landed = 0;
    MCRP_TRY(from_base(PMPI_Test(&requests_[moved_], &landed, MPI_STATUS_IGNORE)));
    if (!landed) return {};
    const ByteRange r = plan_.chunk(moved_);
    MCRP_TRY(device::copy_async(static_cast<char*>(transfer_.data) + r.lo, host_.data() + r.lo, r.bytes(), stream_,
                                "cudaMemcpyAsync (a point-to-point chunk to the device)"));
    MCRP_TRY(device::record_event(stream_, copied_[moved_]));
  }
  // The copies run in order on one stream: the last one done means all are.
  return device::query_event(copied_[messages_ - 1].get(), done);
}

}  // namespace mcrp
