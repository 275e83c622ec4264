// The staged path: what NCCL cannot do on device buffers still runs, on the base MPI, through
// pinned host copies (this is what makes a non-CUDA-aware base MPI CUDA-aware).
#include <memory>
#include <utility>

#include "runtime/errors.h"
#include "collectives/paths.h"
#include "collectives/staged_pipeline.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "runtime/staging.h"
#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"

namespace mcrp {
namespace {

// One staged call: the host images of both sides and how to hand them to the base MPI. Until
// stage_in() the images are the user's own buffers, which is what a CUDA-aware base MPI gets. It
// keeps its own copy of the call, so a nonblocking op that owns it outlives the wrapper's frame.
class StagedCall {
 public:
  explicit StagedCall(const Prepared& p) : call_(*p.call), p_(p) {
    p_.call = &call_;
    send_.base = p_.layout.send.base;
    recv_.base = p_.layout.recv.base;
  }

  Status stage_in(cudaStream_t stream) {
    MCRP_TRY(mcrp::stage_in(p_.layout.send, p_.send_type, stream, p_.device, &send_));
    return mcrp::stage_in(p_.layout.recv, p_.recv_type, stream, p_.device, &recv_);
  }
  Status stage_out(cudaStream_t stream) const { return mcrp::stage_out(p_.layout.recv, recv_, stream); }

  // The buffer arguments for the base MPI: the host image when the side is significant, else the
  // caller's own argument (MPI_IN_PLACE, or a pointer MPI ignores on this rank).
  const void* send_argument() const { return p_.layout.send.significant() ? send_.base : call_.sendbuf; }
  void* recv_argument() const { return p_.layout.recv.significant() ? recv_.base : call_.recvbuf; }

 private:
  CollCall call_;
  Prepared p_;
  HostImage send_, recv_;
};

// The nonblocking staged call: the base MPI's own nonblocking collective runs on the host images;
// once it completes, the copy back is queued and its event awaited. The host images are held
// until then, and released before the generalized request completes.
class StagedOp final : public AsyncOp {
 public:
  StagedOp(const Prepared& p, cudaStream_t stream, bool copy)
      : staged_(p), stream_(stream), device_(p.device), copy_(copy) {}

  StagedCall& staged() { return staged_; }
  MPI_Request* inner() { return &inner_; }

  Status progress(bool* done) override {
    if (!copied_back_) {
      int flag = 0;
      const int rc = PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return already_raised(rc);
      if (!flag) return {};
      if (!copy_) {
        *done = true;
        return {};
      }
      device::DeviceGuard guard(device_);  // polled from whatever thread waits, any device current
      MCRP_TRY(staged_.stage_out(stream_));
      MCRP_TRY(device::record_event(stream_, copied_back_));
    }
    return device::query_event(copied_back_.get(), done);
  }

 private:
  StagedCall staged_;
  cudaStream_t stream_;
  int device_;
  bool copy_;
  MPI_Request inner_ = MPI_REQUEST_NULL;
  device::Event copied_back_;  // set once the copy back is queued
};

}  // namespace

Status run_staged(const Prepared& p, const BaseCall& base, bool copy) {
  if (copy) {
    if (auto pipelined = plan_pipelined(p)) return run_pipelined(std::move(pipelined));
  }
  cudaStream_t stream = nullptr;
  device::DeviceGuard on_device(p.device);  // events for the waits belong to the stream's device
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MpiProgress progress;
  StagedCall staged(p);
  if (copy) MCRP_TRY(staged.stage_in(stream));
  // The copies in (or, CUDA-aware, the application's prior device work) finish before the base
  // MPI starts reading: it has no way to wait on a stream.
  MCRP_TRY(device::wait_stream(stream, progress));
  const int rc = call_base(base, *p.call, staged.send_argument(), staged.recv_argument());
  if (rc != MPI_SUCCESS) return already_raised(rc);
  if (!copy) return {};
  MCRP_TRY(staged.stage_out(stream));
  return device::wait_stream(stream, progress);
}

Status start_staged(const Prepared& p, const BaseCall& base, bool copy, MPI_Request* request) {
  if (copy) {
    if (auto pipelined = plan_pipelined(p)) return start_pipelined(std::move(pipelined), request);
  }
  cudaStream_t stream = nullptr;
  device::DeviceGuard on_device(p.device);  // events for the waits belong to the stream's device
  MCRP_TRY(device::copy_stream(p.device, &stream));
  MpiProgress progress;
  auto op = std::make_unique<StagedOp>(p, stream, copy);
  if (copy) MCRP_TRY(op->staged().stage_in(stream));
  // The copies in (or, CUDA-aware, the application's prior device work) finish before the base
  // MPI starts reading: it has no way to wait on a stream.
  MCRP_TRY(device::wait_stream(stream, progress));
  const int rc = call_base(base, *p.call, op->staged().send_argument(), op->staged().recv_argument(), op->inner());
  if (rc != MPI_SUCCESS) return already_raised(rc);
  return start_generalized(std::move(op), p.call->comm, nonblocking_mpi_name(p.call->kind), request);
}

}  // namespace mcrp
