// The staged core (runtime/staged_sides.h): a staged call's host images, the blocking flow and the
// nonblocking op that completes it.
#include "runtime/staged_sides.h"

#include <memory>
#include <utility>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/errors.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "runtime/staging.h"

namespace mcrp {
namespace {

// The host images of one staged call's sides, and the arguments they make for the base MPI. Until
// stage_in() the images are the user's own buffers, which is what a CUDA-aware base MPI gets. It
// refers to the sides, which must outlive it: a routed blocking call's layout (no copy), or the
// StagedSides a nonblocking op owns.
class StagedCall {
 public:
  StagedCall(const BufferSide& send, const TypeInfo& send_type, const BufferSide& recv, const TypeInfo& recv_type,
             const void* sendbuf, void* recvbuf, int device)
      : send_side_(send), recv_side_(recv), send_type_(send_type), recv_type_(recv_type), sendbuf_(sendbuf),
        recvbuf_(recvbuf), device_(device) {
    send_.base = send.base;
    recv_.base = recv.base;
  }
  explicit StagedCall(const StagedSides& s)
      : StagedCall(s.send, s.send_type, s.recv, s.recv_type, s.sendbuf, s.recvbuf, s.device) {}

  int device() const { return device_; }

  Status stage_in(cudaStream_t stream) {
    MCRP_TRY(mcrp::stage_in(send_side_, send_type_, stream, device_, &send_));
    return mcrp::stage_in(recv_side_, recv_type_, stream, device_, &recv_);
  }
  Status stage_out(cudaStream_t stream) const { return mcrp::stage_out(recv_side_, recv_, stream); }

  // The buffer arguments for the base MPI: the host image when the side is significant, else the
  // caller's own argument (MPI_IN_PLACE, or a pointer MPI ignores on this rank).
  const void* send_argument() const { return send_side_.significant() ? send_.base : sendbuf_; }
  void* recv_argument() const { return recv_side_.significant() ? recv_.base : recvbuf_; }

  // Copies in (when `copy`) and waits for them, or, CUDA-aware, for the application's prior device
  // work: the base MPI has no way to wait on a stream before it reads.
  Status prepare(bool copy, cudaStream_t stream, MpiProgress& progress) {
    if (copy) MCRP_TRY(stage_in(stream));
    return device::wait_stream(stream, progress);
  }

 private:
  const BufferSide& send_side_;
  const BufferSide& recv_side_;
  const TypeInfo& send_type_;
  const TypeInfo& recv_type_;
  const void* sendbuf_;
  void* recvbuf_;
  int device_;
  HostImage send_, recv_;
};

// The nonblocking staged call: the base MPI's own nonblocking collective runs on the host images;
// once it completes, the copy back is queued and its event awaited. The sides (its own copy, so
// the op outlives the wrapper's frame) and the host images are held until then, and released
// before the generalized request completes.
class StagedOp final : public AsyncOp {
 public:
  StagedOp(StagedSides sides, cudaStream_t stream, bool copy)
      : sides_(std::move(sides)), staged_(sides_), stream_(stream), copy_(copy) {}

  StagedCall& staged() { return staged_; }
  MPI_Request* inner() { return &inner_; }

  Status progress(bool* done) override {
    if (!copied_back_) {
      int flag = 0;
      const int rc = PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE);
      MCRP_TRY(from_base(rc));
      if (!flag) return {};
      if (!copy_) {
        *done = true;
        return {};
      }
      device::DeviceGuard guard(staged_.device());  // polled from whatever thread waits, any device current
      MCRP_TRY(staged_.stage_out(stream_));
      MCRP_TRY(device::record_event(stream_, copied_back_));
    }
    return device::query_event(copied_back_.get(), done);
  }

 private:
  StagedSides sides_;  // before staged_, which refers to it
  StagedCall staged_;
  cudaStream_t stream_;
  bool copy_;
  MPI_Request inner_ = MPI_REQUEST_NULL;
  device::Event copied_back_;  // set once the copy back is queued
};

// The blocking staged call: copies in, the base call on the images, the copies back awaited.
Status run_staged_call(StagedCall& staged, const StagedBase& base, bool copy) {
  cudaStream_t stream = nullptr;
  device::DeviceGuard on_device(staged.device());  // events for the waits belong to the stream's device
  MCRP_TRY(device::copy_stream(staged.device(), &stream));
  MpiProgress progress("a staged call (its copies and the base MPI's call)");
  MCRP_TRY(staged.prepare(copy, stream, progress));
  const int rc = base(staged.send_argument(), staged.recv_argument(), nullptr);
  MCRP_TRY(from_base(rc));
  if (!copy) return {};
  MCRP_TRY(staged.stage_out(stream));
  return device::wait_stream(stream, progress);
}

}  // namespace

int device_of(const StagedSides& sides) {
  for (const BufferSide* side : {&sides.send, &sides.recv}) {
    if (!side->significant() || side->blocks.empty()) continue;
    const device::PointerInfo where = device::locate(first_reached_byte(*side));
    if (where.kind == device::MemoryKind::device) return where.device;
  }
  return -1;
}

Status run_staged_sides(const BufferSide& send, const TypeInfo& send_type, const BufferSide& recv,
                        const TypeInfo& recv_type, const void* sendbuf, void* recvbuf, int device,
                        const StagedBase& base, bool copy) {
  StagedCall staged(send, send_type, recv, recv_type, sendbuf, recvbuf, device);
  return run_staged_call(staged, base, copy);
}

Status run_staged_sides(const StagedSides& sides, const StagedBase& base, bool copy) {
  StagedCall staged(sides);
  return run_staged_call(staged, base, copy);
}

Status start_staged_sides(StagedSides sides, const StagedBase& base, bool copy, MPI_Comm comm, const char* call,
                          MPI_Request* request) {
  cudaStream_t stream = nullptr;
  device::DeviceGuard on_device(sides.device);  // events for the waits belong to the stream's device
  MCRP_TRY(device::copy_stream(sides.device, &stream));
  MpiProgress progress("the start of a staged call (its copies in)");
  const MPI_Datatype send_type = sides.send.type, recv_type = sides.recv.type;
  auto op = std::make_unique<StagedOp>(std::move(sides), stream, copy);
  MCRP_TRY(op->staged().prepare(copy, stream, progress));
  const int rc = base(op->staged().send_argument(), op->staged().recv_argument(), op->inner());
  MCRP_TRY(from_base(rc));
  return start_generalized(std::move(op), comm, call, {send_type, recv_type}, request);
}

}  // namespace mcrp
