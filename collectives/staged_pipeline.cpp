#include "collectives/staged_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>
#include <vector>

#include "collectives/pipeline_shape.h"
#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/buffer.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/packing.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "tuning/decision.h"

namespace mcrp {

namespace {
std::atomic<long long> g_chunks_started{0};  // for tests: mcrpmpi_staged_pipeline_chunks()
}  // namespace

// Chunk copies queued ahead of the collectives: enough to keep the copy engine busy while the host
// notices one chunk's arrival and starts its collective, few enough to need only a small ring of
// events.
constexpr int kCopiesAhead = 4;

class PipelinedCall final : public AsyncOp {
 public:
  PipelinedCall(const Prepared& p, PipelineShape shape)
      : call_(*p.call), shape_(std::move(shape)), device_(p.device) {}
  ~PipelinedCall() override { finish_started(); }

  const CollCall& call() const { return call_; }

  // Copies every chunk in and starts its collective, waiting (with MPI progressing, and copying
  // back chunks already done) only for the copies in.
  Status start(MpiProgress& mpi);
  Status progress(bool* done) override;

 private:
  class CopyBackWhileWaiting;

  int chunks() const { return shape_.plan.chunks; }
  Status prepare_images(MpiProgress& mpi);
  Status copy_in(int k);
  Status start_chunk(int k);
  Status copy_back_ready();
  Status copy_back(int k);
  Status unpack_outputs();
  void finish_started();

  CollCall call_;
  PipelineShape shape_;
  int device_;
  cudaStream_t to_host_ = nullptr;
  cudaStream_t to_device_ = nullptr;
  std::vector<device::Event> copied_in_;  // ring: chunk k's copies in are done when [k % size] is
  std::vector<MPI_Request> requests_;     // chunk k's base call
  std::vector<std::vector<MPI_Count>> chunk_counts_;  // an uneven reduce_scatter's counts per chunk
  int started_ = 0;                       // chunks whose base call is started
  int returned_ = 0;                      // chunks whose result is on its way back (in chunk order)
  device::Event copied_back_;             // recorded after the last copy back
};

namespace {

// A chunk's rows between the user's buffer (or a packed side's host rows) and the chunk's image.
Status copy_rows(const ChunkedSide& side, const ByteRange& range, bool to_image, cudaStream_t stream) {
  char* image = side.chunk_image(range);
  char* rows = side.rows_at + range.lo;
  const std::size_t width = range.bytes();
  if (side.packed) {
    if (to_image) device::copy_rows_now(image, width, rows, side.pitch, width, static_cast<std::size_t>(side.rows));
    else device::copy_rows_now(rows, side.pitch, image, width, width, static_cast<std::size_t>(side.rows));
    return {};
  }
  if (side.uneven()) {  // one copy per row, each as long as the row's piece of the chunk
    for (int r = 0; r < side.rows; ++r) {
      char* at = side.rows_at + side.row_offset(r) + range.lo;
      const std::size_t piece = side.piece(r, range);
      MCRP_TRY(device::copy_async(to_image ? image : at, to_image ? at : image, piece, stream,
                                  "cudaMemcpyAsync (pipelined chunk row)"));
      image += piece;
    }
    return {};
  }
  if (to_image) {
    return device::copy_rows_async(image, width, rows, side.pitch, width, static_cast<std::size_t>(side.rows), stream,
                                   "cudaMemcpy2DAsync (pipelined chunk to host)");
  }
  return device::copy_rows_async(rows, side.pitch, image, width, width, static_cast<std::size_t>(side.rows), stream,
                                 "cudaMemcpy2DAsync (pipelined chunk to device)");
}

// A packed side's span, device to host, and (an input) its packed rows.
Status pack_input(ChunkedSide& side, cudaStream_t stream, MpiProgress& mpi) {
  side.span = span_of(side.user, side.type);
  const std::size_t packed_bytes = static_cast<std::size_t>(side.rows) * side.row_bytes;
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, side.span.bytes(), side.span_image));
  MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, packed_bytes, side.packed_rows));
  side.rows_at = side.packed_rows.data();
  // An output needs the span too: the bytes between its elements keep their device contents.
  MCRP_TRY(device::copy_async(side.span_image.data(), side.user.base + side.span.lo, side.span.bytes(), stream,
                              "cudaMemcpyAsync (pipelined span to host)"));
  MCRP_TRY(device::wait_stream(stream, mpi));
  if (!side.copy_in) return {};
  return pack_blocks(side.user, span_base(side.span_image.data(), side.span.lo), side.packed_rows.data(), packed_bytes,
                     false);
}

Status unpack_output(ChunkedSide& side, cudaStream_t stream) {
  const std::size_t packed_bytes = static_cast<std::size_t>(side.rows) * side.row_bytes;
  MCRP_TRY(pack_blocks(side.user, span_base(side.span_image.data(), side.span.lo), side.packed_rows.data(),
                       packed_bytes, true));
  return device::copy_async(side.user.base + side.span.lo, side.span_image.data(), side.span.bytes(), stream,
                            "cudaMemcpyAsync (pipelined span to device)");
}

}  // namespace

// While the start waits for a chunk's copy in, chunks whose collective is done go back already.
class PipelinedCall::CopyBackWhileWaiting final : public device::ProgressHook {
 public:
  CopyBackWhileWaiting(PipelinedCall& call, MpiProgress& mpi) : call_(call), mpi_(mpi) {}
  Status poll() override {
    MCRP_TRY(mpi_.poll());
    return call_.copy_back_ready();
  }

 private:
  PipelinedCall& call_;
  MpiProgress& mpi_;
};

Status PipelinedCall::prepare_images(MpiProgress& mpi) {
  for (ChunkedSide* side : {&shape_.send, &shape_.recv}) {
    if (!side->active) continue;
    // The streams wait for their own GPU's earlier default-stream work; a side on another GPU's too.
    const device::PointerInfo where = device::locate(side->user_memory());
    MCRP_TRY(device::order_after_memory_device(where, device_, to_host_));
    MCRP_TRY(device::order_after_memory_device(where, device_, to_device_));
    MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, side->total_bytes(), side->image));
    if (side->packed) MCRP_TRY(pack_input(*side, to_host_, mpi));
  }
  return {};
}

Status PipelinedCall::copy_in(int k) {
  const ByteRange range = shape_.plan.chunk(k);
  if (shape_.send.copy_in) MCRP_TRY(copy_rows(shape_.send, range, true, to_host_));
  return device::record_event(to_host_, copied_in_[static_cast<std::size_t>(k) % copied_in_.size()]);
}

Status PipelinedCall::start_chunk(int k) {
  const ByteRange range = shape_.plan.chunk(k);
  // An inactive side is an argument MPI ignores on this rank (reduce's recvbuf off the root): passed
  // as the caller gave it.
  const void* send = shape_.send.active ? shape_.send.chunk_image(range) : call_.sendbuf;
  void* recv = shape_.recv.active ? shape_.recv.chunk_image(range) : call_.recvbuf;
  const MPI_Count count = static_cast<MPI_Count>(range.bytes() / shape_.element_bytes);
  MPI_Request* request = &requests_[static_cast<std::size_t>(k)];
  const MPI_Comm comm = call_.comm;
  int rc = MPI_SUCCESS;
  switch (call_.kind) {
    case CollKind::allreduce:
      rc = PMPI_Iallreduce_c(send, recv, count, shape_.type, shape_.op, comm, request);
      break;
    case CollKind::reduce:
      rc = PMPI_Ireduce_c(send, recv, count, shape_.type, shape_.op, call_.root, comm, request);
      break;
    case CollKind::reduce_scatter_block:
      rc = PMPI_Ireduce_scatter_block_c(send, recv, count, shape_.type, shape_.op, comm, request);
      break;
    case CollKind::reduce_scatter: {  // every block's piece of the chunk; MPI reads the counts until completion
      std::vector<MPI_Count>& counts = chunk_counts_[static_cast<std::size_t>(k)];
      for (int r = 0; r < shape_.send.rows; ++r) {
        counts.push_back(static_cast<MPI_Count>(shape_.send.piece(r, range) / shape_.element_bytes));
      }
      rc = PMPI_Ireduce_scatter_c(send, recv, counts.data(), shape_.type, shape_.op, comm, request);
      break;
    }
    case CollKind::bcast:  // one buffer: the root's input image, the others' output image
      rc = PMPI_Ibcast_c(shape_.send.active ? const_cast<void*>(send) : recv, count, MPI_BYTE, call_.root, comm,
                         request);
      break;
    case CollKind::allgather:
      rc = PMPI_Iallgather_c(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm, request);
      break;
    default:
      return Status(MPI_ERR_INTERN, "no pipelined form of this collective");
  }
  MCRP_TRY(from_base(rc));
  ++started_;
  g_chunks_started.fetch_add(1, std::memory_order_relaxed);
  return {};
}

Status PipelinedCall::copy_back(int k) {
  if (!shape_.recv.copy_out) return {};
  return copy_rows(shape_.recv, shape_.plan.chunk(k), false, to_device_);
}

Status PipelinedCall::copy_back_ready() {
  while (returned_ < started_) {
    int flag = 0;
    const int rc = PMPI_Test(&requests_[static_cast<std::size_t>(returned_)], &flag, MPI_STATUS_IGNORE);
    MCRP_TRY(from_base(rc));
    if (!flag) return {};
    MCRP_TRY(copy_back(returned_));
    ++returned_;
  }
  return {};
}

Status PipelinedCall::unpack_outputs() {
  if (shape_.recv.active && shape_.recv.packed) return unpack_output(shape_.recv, to_device_);
  return {};
}

Status PipelinedCall::start(MpiProgress& mpi) {
  device::DeviceGuard guard(device_);
  MCRP_TRY(device::copy_stream(device_, &to_host_));
  MCRP_TRY(device::copy_back_stream(device_, &to_device_));
  MCRP_TRY(prepare_images(mpi));
  requests_.assign(static_cast<std::size_t>(chunks()), MPI_REQUEST_NULL);
  if (call_.kind == CollKind::reduce_scatter) chunk_counts_.resize(static_cast<std::size_t>(chunks()));
  const int ahead = std::min(kCopiesAhead, chunks());
  copied_in_.resize(static_cast<std::size_t>(ahead));
  for (int k = 0; k < ahead; ++k) MCRP_TRY(copy_in(k));
  CopyBackWhileWaiting hook(*this, mpi);
  for (int k = 0; k < chunks(); ++k) {
    MCRP_TRY(device::wait_event(copied_in_[static_cast<std::size_t>(k % ahead)].get(), hook));
    MCRP_TRY(start_chunk(k));
    if (k + ahead < chunks()) MCRP_TRY(copy_in(k + ahead));  // reuses the event just seen complete
  }
  return {};
}

Status PipelinedCall::progress(bool* done) {
  device::DeviceGuard guard(device_);  // polled from whatever thread waits, any device current
  if (!copied_back_) {
    MCRP_TRY(copy_back_ready());
    if (returned_ < chunks()) return {};
    MCRP_TRY(unpack_outputs());
    MCRP_TRY(device::record_event(to_device_, copied_back_));
  }
  return device::query_event(copied_back_.get(), done);
}

// Chunks already started when a later step failed are matched by the peers all the same: they
// finish before the images they use are released.
void PipelinedCall::finish_started() {
  for (int k = returned_; k < started_; ++k) PMPI_Wait(&requests_[static_cast<std::size_t>(k)], MPI_STATUS_IGNORE);
}

void PipelinedCallDeleter::operator()(PipelinedCall* call) const { delete call; }

PipelinedCallPtr plan_pipelined(const Prepared& prepared) {
  PipelineShape shape;
  if (!shape_pipeline(prepared, tuning::staged_chunk_bytes(prepared.call->kind), &shape)) return nullptr;
  if (config().debug) {
    std::fprintf(stderr, "mcrpmpi[%d/%d]: %s staged in %d chunks of %zu bytes per row\n", prepared.self.rank,
                 prepared.self.size, mpi_name(prepared.call->kind), shape.plan.chunks, shape.plan.chunk_bytes);
  }
  return PipelinedCallPtr(new PipelinedCall(prepared, std::move(shape)));
}

Status run_pipelined(PipelinedCallPtr call) {
  auto run = [&call]() -> Status {
    MpiProgress mpi("a pipelined staged collective");
    MCRP_TRY(call->start(mpi));
    for (;;) {
      bool done = false;
      MCRP_TRY(call->progress(&done));
      if (done) return {};
      MCRP_TRY(mpi.poll());
    }
  };
  const Status status = run();
  if (!status.ok()) device::note_abandoned_work();  // chunk copies of the failed call may still be queued
  return status;
}

Status start_pipelined(PipelinedCallPtr call, MPI_Request* request) {
  MpiProgress mpi("a pipelined staged collective's start");
  MCRP_TRY(call->start(mpi));
  const CollCall& c = call->call();
  const MPI_Comm comm = c.comm;
  const char* name = nonblocking_mpi_name(c.kind);
  const MPI_Datatype send_type = c.sendtype, recv_type = c.recvtype;
  return start_generalized(std::unique_ptr<AsyncOp>(call.release()), comm, name, {send_type, recv_type}, request);
}

}  // namespace mcrp

extern "C" long long mcrpmpi_staged_pipeline_chunks() { return mcrp::g_chunks_started.load(std::memory_order_relaxed); }
