#include "p2p/staged.h"

#include <cstring>
#include <memory>
#include <utility>

#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/errors.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "runtime/staging.h"

namespace mcrp {
namespace {

// Both sides' host images for one call, and the arguments the base MPI gets in place of the user's.
// Borrows the prepared call: a blocking call's lives in the wrapper's frame, a nonblocking op's in
// the op (OwnedPrepared), so the blocking path copies nothing (about 85 instructions a call,
// cost.device_p2p_calls).
class StagedTransfer {
 public:
  explicit StagedTransfer(const P2PPrepared& p) : p_(p), call_(*p.call) {
    send_.base = p_.send.base;
    recv_.base = p_.recv.base;
  }

  Status stage_in(cudaStream_t stream) {
    MCRP_TRY(mcrp::stage_in(p_.send, p_.send_type, stream, p_.device, &send_));
    return mcrp::stage_in(p_.recv, p_.recv_type, stream, p_.device, &recv_);
  }
  // The received bytes back to the device (nothing for a cancelled receive or a send).
  Status stage_out(const MPI_Status& status, cudaStream_t stream) const {
    if (!recv_.staged) return {};
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled) return {};
    MPI_Count bytes = 0;
    PMPI_Get_count_c(&status, MPI_BYTE, &bytes);
    return stage_out_received(p_.recv, p_.recv_type, recv_, bytes, stream);
  }
  bool copies_back() const { return recv_.staged; }

  // The base MPI's buffer arguments: the image of a significant side, else the caller's own.
  const void* send_argument() const { return p_.send.significant() ? send_.base : call_.sendbuf; }
  void* recv_argument() const { return p_.recv.significant() ? recv_.base : call_.recvbuf; }

  // Unstaged (a CUDA-aware base MPI), Sendrecv_replace: the buffer's bytes copied on the device,
  // on `stream`, for the split send below to read while the receive writes the buffer.
  Status copy_replaced_on_device(cudaStream_t stream) {
    if (call_.kind != P2PKind::sendrecv_replace || !p_.recv.significant()) return {};
    const Span span = span_of(p_.recv, p_.recv_type);
    if (span.bytes() == 0) return {};
    MCRP_TRY(device::acquire(device::BufferKind::device, p_.device, span.bytes(), replace_copy_));
    MCRP_TRY(device::copy_async(replace_copy_.data(), p_.recv.base + span.lo, span.bytes(), stream,
                                "cudaMemcpyAsync (device to device: what MPI_Isendrecv_replace sends)"));
    recv_.span = span;  // unstaged, recv_ only notes where replace_copy_ starts
    return {};
  }

  // A nonblocking sendrecv as a receive into (*requests)[0] and a send from (*requests)[1], on the
  // images or (unstaged) the device buffers: MPICH 4.0.2's MPI_Isendrecv completes with a status
  // that does not describe the received message, and the copy back needs its size. Sendrecv_replace
  // sends from a copy of its image (or of its device bytes), so the receive cannot overwrite what
  // is still being sent.
  Status start_split_sendrecv(MPI_Request (*requests)[2]) {
    const P2PCall& c = call_;
    const void* outgoing = send_argument();
    if (c.kind == P2PKind::sendrecv_replace && recv_.staged) {
      MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, recv_.span.bytes(), replace_copy_));
      std::memcpy(replace_copy_.data(), recv_.pinned.data(), recv_.span.bytes());
    }
    if (c.kind == P2PKind::sendrecv_replace && replace_copy_.data() != nullptr) {
      outgoing = span_base(replace_copy_.data(), recv_.span.lo);
    }
    MCRP_TRY(from_base(PMPI_Irecv_c(recv_argument(), c.recvcount, c.recvtype, c.source, c.recvtag, c.comm, &(*requests)[0])));
    return from_base(PMPI_Isend_c(outgoing, c.sendcount, c.sendtype, c.dest, c.sendtag, c.comm, &(*requests)[1]));
  }

 private:
  const P2PPrepared& p_;
  const P2PCall& call_;
  HostImage send_, recv_;
  device::Buffer replace_copy_;  // Sendrecv_replace, nonblocking: what is sent
};

// A prepared call with its own copy of the call it describes: outlives the wrapper's frame.
struct OwnedPrepared {
  explicit OwnedPrepared(const P2PPrepared& p) : call(*p.call), prepared(p) { prepared.call = &call; }
  OwnedPrepared(const OwnedPrepared&) = delete;  // prepared.call points into this object
  OwnedPrepared& operator=(const OwnedPrepared&) = delete;
  P2PCall call;
  P2PPrepared prepared;
};

// The nonblocking staged call: the base MPI's own nonblocking operation (or, for a sendrecv, a
// receive and a send) runs on the host images; once it completes, received bytes are copied back
// and that copy awaited. The images are held until then and released before the request completes.
class StagedP2POp final : public AsyncOp {
 public:
  StagedP2POp(const P2PPrepared& p, cudaStream_t stream)
      : owned_(p), staged_(owned_.prepared), stream_(stream), device_(p.device) {}

  StagedTransfer& staged() { return staged_; }
  MPI_Request* inner() { return &inner_[0]; }
  Status start_split_sendrecv() { return staged_.start_split_sendrecv(&inner_); }

  Status progress(bool* done) override {
    if (cancel_requested_) {
      // MPI_Cancel only asked (its callback cannot call MPI: the base MPI holds its lock then).
      cancel_requested_ = false;
      for (MPI_Request& inner : inner_) {
        if (inner != MPI_REQUEST_NULL) PMPI_Cancel(&inner);
      }
    }
    if (!copy_queued_) {
      // A request that fails is over (MPI frees it); the other runs on to its end before the op
      // reports the failure, since the base MPI may still read or write its host image.
      for (int i = 0; i < 2; ++i) {
        if (inner_[i] == MPI_REQUEST_NULL) continue;
        int flag = 0;
        const int rc = PMPI_Test(&inner_[i], &flag, i == 0 ? &status_ : MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
          if (base_failure_.ok()) base_failure_ = already_raised(rc);
          inner_[i] = MPI_REQUEST_NULL;
        }
      }
      if (inner_[0] != MPI_REQUEST_NULL || inner_[1] != MPI_REQUEST_NULL) return {};
      MCRP_TRY(base_failure_);  // nothing was copied back: no device work left behind
      if (!staged_.copies_back()) {
        *done = true;
        return {};
      }
      device::DeviceGuard guard(device_);  // polled from whatever thread waits, any device current
      copying_back_ = true;
      MCRP_TRY(staged_.stage_out(status_, stream_));
      MCRP_TRY(device::record_event(stream_, copied_back_));
      copy_queued_ = true;
    }
    return device::query_event(copied_back_.get(), done);
  }

  void fill_status(MPI_Status* status) const override { *status = status_; }

  // A receive not yet matched (or a send not yet started) is withdrawn by the base MPI at the next
  // progress; its status then says cancelled and nothing is copied back.
  void cancel() override { cancel_requested_ = true; }
  // A failure of the base MPI's operation comes before any copy back.
  bool left_device_work() const override { return copying_back_; }

 private:
  OwnedPrepared owned_;  // before staged_, which borrows it
  StagedTransfer staged_;
  cudaStream_t stream_;
  int device_;
  MPI_Request inner_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status status_{};  // of inner_[0]
  bool cancel_requested_ = false;
  bool copying_back_ = false;
  bool copy_queued_ = false;
  Status base_failure_;
  device::Event copied_back_;
};

}  // namespace

Status run_staged_p2p(const P2PPrepared& p, const P2PBaseCall& base, bool copy, MPI_Status* status) {
  device::DeviceGuard on_device(p.device);  // events for the waits belong to the stream's device
  cudaStream_t stream = nullptr;
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MpiProgress progress("a staged point-to-point call (its copies and the base MPI's call)");
  StagedTransfer staged(p);
  if (copy) MCRP_TRY(staged.stage_in(stream));
  // The copies in (or, CUDA-aware, the application's prior device work) finish before the base
  // MPI reads: it has no way to wait on a stream.
  MCRP_TRY(device::wait_stream(stream, progress));
  MPI_Status local;
  MPI_Status* received = status == MPI_STATUS_IGNORE ? &local : status;
  MCRP_TRY(from_base(base(staged.send_argument(), staged.recv_argument(), nullptr, received)));
  if (!staged.copies_back()) return {};
  MCRP_TRY(staged.stage_out(*received, stream));
  return device::wait_stream(stream, progress);
}

Status start_staged_p2p(const P2PPrepared& p, const P2PBaseCall& base, bool copy, MPI_Request* request) {
  device::DeviceGuard on_device(p.device);  // events for the waits belong to the stream's device
  cudaStream_t stream = nullptr;
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MpiProgress progress("the start of a staged point-to-point call (its copies in)");
  auto op = std::make_unique<StagedP2POp>(p, stream);
  MCRP_TRY(copy ? op->staged().stage_in(stream) : op->staged().copy_replaced_on_device(stream));
  // As in run_staged_p2p: the base MPI reads only after the copies in (or the prior device work).
  MCRP_TRY(device::wait_stream(stream, progress));
  MCRP_TRY(p.call->sendrecv() ? op->start_split_sendrecv()
                              : from_base(base(op->staged().send_argument(), op->staged().recv_argument(), op->inner(),
                                               MPI_STATUS_IGNORE)));
  return start_generalized(std::move(op), p.call->comm, p.call->entry, {p.call->sendtype, p.call->recvtype}, request);
}

}  // namespace mcrp
