// The NCCL path: each MPI collective expressed with NCCL collectives, or with grouped send/recv for
// the vector forms (and for alltoall, gather and scatter when the loaded NCCL predates 2.28).
// MPI's in-place conventions are translated to NCCL's here (FIELD-NOTES, "In-place conventions").
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "collectives/nccl_types.h"
#include "collectives/paths.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/device_view.h"
#include "runtime/launch_lock.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_comm.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/requests.h"

namespace mcrp {
namespace {

struct Transfer {
  int peer;
  char* data;
  std::size_t bytes;
};

class Launcher {
 public:
  Launcher(const Prepared& p, NcclComm& comm) : p_(p), comm_(comm), nccl_(*nccl_api()) {}

  // Issues the NCCL calls. *enqueue_pending: NCCL is still enqueuing them (a nonblocking
  // communicator answered ncclInProgress); after_enqueue() must wait until it has finished.
  Status launch(DeviceView& send, DeviceView& recv, bool* enqueue_pending);
  // Stream work that follows the NCCL work (an in-place reduce_scatter's move to offset 0). The two
  // ranges overlap when the rank's block is longer than the blocks before it, and cudaMemcpyAsync
  // leaves overlapping copies undefined: those go through device scratch.
  Status after_enqueue() {
    const bool overlapping = after_.to != after_.from && after_.from < after_.to + after_.bytes;
    if (!overlapping) return copy(after_.to, after_.from, after_.bytes);  // nothing, or a disjoint move
    MCRP_TRY(device::acquire(device::BufferKind::device, comm_.device, after_.bytes, scratch_));
    MCRP_TRY(copy(scratch_.data(), after_.from, after_.bytes));
    return copy(after_.to, scratch_.data(), after_.bytes);
  }

 private:
  cudaStream_t stream() const { return comm_.stream.get(); }
  // The communicators are nonblocking: ncclInProgress means "still being enqueued"; the
  // communicator's owner waits that out without blocking (NcclComm::advance).
  Status check(ncclResult_t rc, const char* what) {
    if (rc == ncclInProgress) {
      pending_ = true;
      return {};
    }
    return settle(comm_, rc, what);
  }
  Status copy(char* to, const char* from, std::size_t bytes) {
    if (bytes == 0 || to == from) return {};
    return device::copy_async(to, from, bytes, stream(), "cudaMemcpyAsync (device to device)");
  }
  // A device copy of a view's bytes, for the in-place forms NCCL has no in-place variant of.
  Status duplicate(const DeviceView& view, DeviceView* out) {
    MCRP_TRY(device::acquire(device::BufferKind::device, comm_.device, view.end(), scratch_));
    out->data = scratch_.data();
    out->share_blocks(view);
    return copy(out->data, view.data, view.end());
  }
  // Grouped point-to-point; zero-byte transfers are skipped on both sides alike, since MPI requires
  // the byte counts of each matching pair to agree.
  Status exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs);
  // NCCL's Gather or Scatter (NCCL >= 2.28), which connect to their peers at first use like ncclSend.
  using RootedCall = decltype(&ncclGather);
  Status rooted_p2p(const char* name, RootedCall call, const char* input, char* output, std::size_t bytes, int root);

  Status reduction(DeviceView& send, DeviceView& recv);
  Status movement(DeviceView& send, DeviceView& recv);
  Status vector_movement(const DeviceView& send, const DeviceView& recv);

  const Prepared& p_;
  NcclComm& comm_;
  const NcclApi& nccl_;
  device::Buffer scratch_;
  bool pending_ = false;
  // Stream work that must follow the NCCL work, issued only once it is enqueued: the in-place
  // reduce-scatter result moved from the rank's block to offset 0.
  struct {
    char* to = nullptr;
    const char* from = nullptr;
    std::size_t bytes = 0;
  } after_;
};

Status Launcher::exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs) {
  std::vector<NcclTransfer> group;
  group.reserve(sends.size() + recvs.size());
  for (const Transfer& t : sends) {
    if (t.bytes > 0) group.push_back(NcclTransfer{t.peer, true, t.data, t.bytes});
  }
  for (const Transfer& t : recvs) {
    if (t.bytes > 0) group.push_back(NcclTransfer{t.peer, false, t.data, t.bytes});
  }
  return check(comm_.issue_transfers(group), "ncclSend/ncclRecv group");
}

Status Launcher::rooted_p2p(const char* name, RootedCall call, const char* input, char* output, std::size_t bytes, int root) {
  // Gather: the root receives from every other rank, which send to it; scatter the reverse. NCCL
  // drops empty ones before they connect anything. (Peers matter on inline-launch communicators only.)
  const bool at_root = p_.self.rank == root;
  const bool opens = comm_.inline_launch && bytes > 0;
  const std::vector<int> none;
  const std::vector<int> root_only = opens && !at_root ? std::vector<int>{root} : none;
  const std::vector<int> others = opens && at_root ? comm_.everyone_else() : none;
  const bool gathering = call == nccl_.Gather;
  const ncclComm_t comm = comm_.handle;
  const cudaStream_t on = stream();
  return check(comm_.issue_p2p(gathering ? root_only : others, gathering ? others : root_only,
                               [=] { return call(input, output, bytes, ncclUint8, root, comm, on); }),
               name);
}

Status Launcher::reduction(DeviceView& send, DeviceView& recv) {
  const CollCall& c = *p_.call;
  ncclDataType_t type;
  ncclRedOp_t op;
  to_nccl_reduction(c.recvtype, c.op, &type, &op);
  const std::size_t element = static_cast<std::size_t>(p_.recv_type.size);
  const bool in_place = c.in_place();
  char* input = in_place ? recv.data : send.data;
  switch (c.kind) {
    case CollKind::allreduce:
      return check(nccl_.AllReduce(input, recv.data, c.recvcount, type, op, comm_.handle, stream()), "ncclAllReduce");
    case CollKind::reduce: {
      const bool root = p_.self.rank == c.root;
      return check(nccl_.Reduce(input, root ? recv.data : input, c.sendcount, type, op, c.root, comm_.handle, stream()),
                   "ncclReduce");
    }
    case CollKind::reduce_scatter_block:
    case CollKind::reduce_scatter: {
      std::vector<std::size_t> counts(static_cast<std::size_t>(p_.self.size));
      for (int i = 0; i < p_.self.size; ++i) {
        counts[i] = static_cast<std::size_t>(c.kind == CollKind::reduce_scatter ? c.recvcounts[i] : c.recvcount);
      }
      std::vector<std::size_t> offsets(counts.size(), 0);
      for (std::size_t i = 1; i < counts.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1] * element;
      const std::size_t mine = offsets[p_.self.rank];
      // MPI leaves an in-place result at offset 0; NCCL's in-place form leaves it at the rank's block.
      char* output = in_place ? recv.data + mine : recv.data;
      if (std::all_of(counts.begin(), counts.end(), [&](std::size_t n) { return n == counts[0]; })) {
        MCRP_TRY(check(nccl_.ReduceScatter(input, output, counts[0], type, op, comm_.handle, stream()),
                       "ncclReduceScatter"));
      } else {
        NcclGroup group(nccl_);
        MCRP_TRY(check(group.start(), "ncclGroupStart"));
        for (int i = 0; i < p_.self.size; ++i) {
          char* block = input + offsets[i];
          MCRP_TRY(check(nccl_.Reduce(block, i == p_.self.rank ? output : block, counts[i], type, op, i, comm_.handle,
                                      stream()),
                         "ncclReduce"));
        }
        MCRP_TRY(check(group.end(), "ncclGroupEnd"));
      }
      if (in_place) after_ = {recv.data, output, counts[p_.self.rank] * element};
      return {};
    }
    default:
      return Status(MPI_ERR_INTERN, std::string("no NCCL reduction for ") + mpi_name(c.kind));
  }
}

Status Launcher::vector_movement(const DeviceView& send, const DeviceView& recv) {
  const CollCall& c = *p_.call;
  const int me = p_.self.rank;
  std::vector<Transfer> sends, recvs;
  auto block = [](const DeviceView& v, std::size_t i) { return Transfer{static_cast<int>(i), v.data + v.offset(i), v.bytes(i)}; };
  switch (c.kind) {
    case CollKind::allgather:
    case CollKind::allgatherv: {
      const Transfer own = c.in_place() ? block(recv, me) : Transfer{me, send.data, send.bytes(0)};
      for (int peer = 0; peer < p_.self.size; ++peer) {
        if (peer == me) continue;
        sends.push_back({peer, own.data, own.bytes});
        recvs.push_back(block(recv, peer));
      }
      MCRP_TRY(copy(recv.data + recv.offset(me), own.data, own.bytes));
      break;
    }
    case CollKind::alltoall:
    case CollKind::alltoallv:
      for (int peer = 0; peer < p_.self.size; ++peer) {
        if (peer == me) continue;
        sends.push_back(block(send, peer));
        recvs.push_back(block(recv, peer));
      }
      MCRP_TRY(copy(recv.data + recv.offset(me), send.data + send.offset(me), recv.bytes(me)));
      break;
    case CollKind::gather:
    case CollKind::gatherv:
      if (me != c.root) {
        sends.push_back({c.root, send.data, send.bytes(0)});
        break;
      }
      for (int peer = 0; peer < p_.self.size; ++peer) {
        if (peer != me) recvs.push_back(block(recv, peer));
      }
      if (!c.in_place()) MCRP_TRY(copy(recv.data + recv.offset(me), send.data, recv.bytes(me)));
      break;
    case CollKind::scatter:
    case CollKind::scatterv:
      if (me != c.root) {
        recvs.push_back({c.root, recv.data, recv.bytes(0)});
        break;
      }
      for (int peer = 0; peer < p_.self.size; ++peer) {
        if (peer != me) sends.push_back(block(send, peer));
      }
      if (c.recvbuf != MPI_IN_PLACE) MCRP_TRY(copy(recv.data, send.data + send.offset(me), send.bytes(me)));
      break;
    default:
      return Status(MPI_ERR_INTERN, std::string("no NCCL exchange for ") + mpi_name(c.kind));
  }
  return exchange(sends, recvs);
}

Status Launcher::movement(DeviceView& send, DeviceView& recv) {
  const CollCall& c = *p_.call;
  const bool root = p_.self.rank == c.root;
  switch (c.kind) {
    case CollKind::bcast:
      return check(nccl_.Broadcast(recv.data, recv.data, recv.bytes(0), ncclUint8, c.root, comm_.handle, stream()),
                   "ncclBroadcast");
    case CollKind::allgather: {
      const char* own = c.in_place() ? recv.data + recv.offset(p_.self.rank) : send.data;
      return check(nccl_.AllGather(own, recv.data, recv.bytes(0), ncclUint8, comm_.handle, stream()), "ncclAllGather");
    }
    case CollKind::alltoall:
    case CollKind::alltoallv: {
      // NCCL has no in-place all-to-all: exchange from a copy of the receive buffer.
      DeviceView recv_copy;
      if (c.in_place()) MCRP_TRY(duplicate(recv, &recv_copy));
      const DeviceView& input = c.in_place() ? recv_copy : send;
      if (c.kind == CollKind::alltoallv || nccl_.AlltoAll == nullptr) return vector_movement(input, recv);
      const bool opens = comm_.inline_launch && recv.bytes(0) > 0;  // peers matter there only
      const std::vector<int> peers = opens ? comm_.everyone_else() : std::vector<int>();
      const char* from = input.data;
      char* to = recv.data;
      const std::size_t bytes = recv.bytes(0);
      const ncclComm_t comm = comm_.handle;
      const cudaStream_t on = stream();
      const auto alltoall = nccl_.AlltoAll;
      return check(comm_.issue_p2p(peers, peers, [=] { return alltoall(from, to, bytes, ncclUint8, comm, on); }),
                   "ncclAlltoAll");
    }
    case CollKind::gather: {
      if (nccl_.Gather == nullptr) return vector_movement(send, recv);
      const std::size_t bytes = root ? recv.bytes(0) : send.bytes(0);
      const char* own = root && c.in_place() ? recv.data + recv.offset(c.root) : send.data;
      return rooted_p2p("ncclGather", nccl_.Gather, own, root ? recv.data : const_cast<char*>(own), bytes, c.root);
    }
    case CollKind::scatter: {
      if (nccl_.Scatter == nullptr) return vector_movement(send, recv);
      const std::size_t bytes = root ? send.bytes(0) : recv.bytes(0);
      char* own = root && c.recvbuf == MPI_IN_PLACE ? send.data + send.offset(c.root) : recv.data;
      return rooted_p2p("ncclScatter", nccl_.Scatter, root ? send.data : own, own, bytes, c.root);
    }
    default:
      return vector_movement(send, recv);
  }
}

Status Launcher::launch(DeviceView& send, DeviceView& recv, bool* enqueue_pending) {
  Status launched;
  {
    // Only the NCCL calls are serialized (NCCL forbids concurrent calls on one device's
    // communicators); waiting for an in-progress launch under the lock could deadlock two threads
    // whose communicators need each other's peers.
    profile::StepTimer launching(profile::Step::launch);
    NcclLaunchLock lock;
    launched = is_reduction(p_.call->kind) ? reduction(send, recv) : movement(send, recv);
  }
  *enqueue_pending = pending_;
  return launched;
}

// One NCCL call and everything it holds while in flight: the device views (packed scratch for
// non-contiguous types) and the launcher (in-place alltoall scratch). The Prepared it refers to
// must outlive it.
class NcclCall {
 public:
  NcclCall(const Prepared& p, NcclComm& comm) : p_(p), comm_(comm), launcher_(p, comm) {}

  // Orders the communicator's stream after the application's earlier default-stream work, packs
  // what needs packing and launches on that stream; does not wait for NCCL.
  Status launch(device::ProgressHook& progress, bool* enqueue_pending) {
    {
      profile::StepTimer ordering(profile::Step::order);
      MCRP_TRY(device::order_after_legacy_stream(comm_.device, stream()));
    }
    MCRP_TRY(send_.prepare(p_.layout.send, p_.send_type, comm_.device, stream(), progress, &p_.send_memory));
    MCRP_TRY(recv_.prepare(p_.layout.recv, p_.recv_type, comm_.device, stream(), progress, &p_.recv_memory));
    return failed(launcher_.launch(send_, recv_, enqueue_pending));
  }
  Status after_enqueue() { return failed(launcher_.after_enqueue()); }
  // After the launched work completed: unpacks a packed result, or copies a relocated one back, on a
  // copy stream (on the communicator's stream it would wait for NCCL work issued since).
  Status finish(device::ProgressHook& progress) {
    if (!recv_.finishes(p_.layout.recv)) return {};
    cudaStream_t copies = nullptr;
    MCRP_TRY(device::finishing_stream(comm_.device, &copies));
    return recv_.finish(p_.layout.recv, copies, progress);
  }
  // NCCL state is unknown after a failure: abort the communicator instead of risking a hang later.
  // (A by-value parameter returned alone is moved, not copied: this runs on every NCCL step.)
  Status failed(Status status) {
    if (status.ok()) return status;
    return comm_.fail(status);
  }
  cudaStream_t stream() const { return comm_.stream.get(); }
  NcclComm& comm() { return comm_; }

 private:
  const Prepared& p_;
  NcclComm& comm_;
  DeviceView send_, recv_;
  Launcher launcher_;
};

// A call's arguments copied, with the arrays it reads (reduce_scatter's counts, read at the
// launch), for work that outlives the caller's frame.
struct OwnedCall {
  explicit OwnedCall(const Prepared& p) : call(keep_arrays(*p.call, p.self, &arrays)), prepared(p) {
    prepared.call = &call;
  }
  OwnedCall(const OwnedCall&) = delete;
  OwnedCall& operator=(const OwnedCall&) = delete;

  ArrayCopies arrays;  // first: `call` points into it
  CollCall call;
  Prepared prepared;
};

// One NCCL call, nonblocking: queued on its communicator and launched in issue order once the
// communicator is set up and the previous call's enqueue has finished (NcclComm drives both without
// blocking), complete when the event recorded after it has completed. NCCL kernels of different
// communicators run on different streams (one per communicator), so a kernel waiting for a peer does
// not keep another communicator's kernel from running: that is what lets ranks issue them in
// different orders (guarantee 2 of docs/collectives.md, "Nonblocking and persistent collectives"). The blocking form
// waits for one of these.
class NcclOp final : public AsyncOp, public QueuedLaunch {
 public:
  NcclOp(const Prepared& p, std::shared_ptr<NcclComm> comm)
      : owned_(p), comm_(std::move(comm)), nccl_(owned_.prepared, *comm_) {}
  ~NcclOp() override {
    if (!launched_.load(std::memory_order_acquire)) comm_->withdraw(this);
  }

  Status start() { return comm_->submit(this); }
  const NcclComm* comm() const { return comm_.get(); }
  // A failure of this call or of the caller's wait for it (MCRPMPI_NCCL_TIMEOUT) stops the
  // communicator: NCCL's state is unknown from here.
  Status failed(const Status& status) { return nccl_.failed(status); }

  bool launch(const Status& setup) override {
    if (!setup.ok()) {
      done_launching(setup);
      return false;
    }
    profile::StepTimer launching(profile::Step::queue);
    device::DeviceGuard guard(comm_->device);
    MpiProgress progress("the launch of queued NCCL work", comm_.get());
    bool enqueue_pending = false;
    const Status launched = nccl_.launch(progress, &enqueue_pending);
    if (!launched.ok()) {
      done_launching(launched);
      return false;
    }
    if (enqueue_pending) return true;  // NcclComm calls enqueued() once NCCL has finished
    enqueued(Status());
    return false;
  }

  void enqueued(const Status& enqueue) override {
    profile::StepTimer launching(profile::Step::queue);
    Status status = enqueue;
    if (status.ok()) {
      device::DeviceGuard guard(comm_->device);
      status = nccl_.after_enqueue();
      if (status.ok()) status = nccl_.failed(device::record_event(nccl_.stream(), done_));
    }
    done_launching(status);
  }

  Status progress(bool* done) override {
    if (!launched_.load(std::memory_order_acquire)) {
      advance_nccl_comms();
      if (!launched_.load(std::memory_order_acquire)) return failed(deadline_.expired());
    }
    MCRP_TRY(launch_status_);
    bool launched_done = false;
    MCRP_TRY(nccl_.failed(device::query_event(done_.get(), &launched_done)));
    if (!launched_done) {
      MCRP_TRY(nccl_.failed(nccl_async_error(comm_->handle)));
      return nccl_.failed(deadline_.expired());  // a peer that never comes (MPI_Wait/MPI_Test)
    }
    MCRP_TRY(comm_->completion());
    profile::StepTimer finishing(profile::Step::finish);
    device::DeviceGuard guard(comm_->device);
    MpiProgress progress("an NCCL call's finish", comm_.get());
    MCRP_TRY(nccl_.finish(progress));
    *done = true;
    return {};
  }

 private:
  void done_launching(const Status& status) {
    launch_status_ = status;
    launched_.store(true, std::memory_order_release);
  }

  OwnedCall owned_;                 // first two: outlive nccl_, which refers to them
  std::shared_ptr<NcclComm> comm_;
  NcclCall nccl_;
  device::Event done_;
  NcclDeadline deadline_;  // from the start: bounds MPI_Wait and MPI_Test loops too
  std::atomic<bool> launched_{false};  // enqueued (or failed): launch_status_ says which
  Status launch_status_;
};

// Holds a communicator's launch turn for a direct call (NcclComm::begin_direct); passes it on to
// queued work when released.
class DirectTurn {
 public:
  explicit DirectTurn(NcclComm& comm) : comm_(comm), held_(comm.begin_direct()) {}
  ~DirectTurn() { release(); }
  DirectTurn(const DirectTurn&) = delete;
  DirectTurn& operator=(const DirectTurn&) = delete;
  explicit operator bool() const { return held_; }
  // Once the work is enqueued: the next call may be enqueued while this one runs.
  void release() {
    if (held_) comm_.end_direct();
    held_ = false;
  }

 private:
  NcclComm& comm_;
  bool held_;
};

// The blocking form when it is this call's turn at once: launched on the calling thread, one event
// recorded after it, and one wait that keeps MPI progressing (rule 2) -- no op object, no copy of
// the call, no trip through the queue. The device views use the router's classification.
Status run_direct(const Prepared& p, NcclComm& comm, DirectTurn& turn) {
  profile::StepTimer launching(profile::Step::queue);
  profile::StepTimer guarding(profile::Step::device);
  device::DeviceGuard guard(comm.device);
  guarding.stop();
  MpiProgress progress("a blocking NCCL call", &comm);
  NcclCall nccl(p, comm);
  bool enqueue_pending = false;
  MCRP_TRY(nccl.launch(progress, &enqueue_pending));
  if (enqueue_pending) MCRP_TRY(nccl.failed(comm.wait_enqueued(progress)));
  MCRP_TRY(nccl.after_enqueue());
  device::Event done;
  {
    profile::StepTimer recording(profile::Step::record);
    MCRP_TRY(nccl.failed(device::record_event(nccl.stream(), done)));
  }
  turn.release();
  launching.stop();
  // A wait that fails (an NCCL error, MCRPMPI_NCCL_TIMEOUT) leaves NCCL's state unknown: aborted.
  MCRP_TRY(nccl.failed(device::wait_event(done.get(), progress)));
  MCRP_TRY(comm.completion());  // stopped by another call's failure: the data is not there
  profile::StepTimer finishing(profile::Step::finish);
  return nccl.finish(progress);
}

}  // namespace

Status run_nccl(const Prepared& p, std::shared_ptr<NcclComm> comm) {
  {
    DirectTurn turn(*comm);
    if (turn) return run_direct(p, *comm, turn);
  }
  // Setup still running, or earlier work queued or being enqueued: in line behind it.
  NcclOp op(p, std::move(comm));
  profile::StepTimer launching(profile::Step::queue);
  MCRP_TRY(op.start());
  launching.stop();
  profile::StepTimer waiting(profile::Step::wait);
  MpiProgress progress("a blocking NCCL call queued (behind the setup or earlier work)", op.comm());
  for (;;) {
    bool done = false;
    MCRP_TRY(op.progress(&done));
    if (done) return {};
    const Status polled = progress.poll();
    if (!polled.ok()) return op.failed(polled);
  }
}

Status start_nccl(const Prepared& p, std::shared_ptr<NcclComm> comm, MPI_Request* request) {
  profile::StepTimer launching(profile::Step::queue);
  auto op = std::make_unique<NcclOp>(p, std::move(comm));
  MCRP_TRY(op->start());
  return start_generalized(std::move(op), p.call->comm, nonblocking_mpi_name(p.call->kind),
                           {p.call->sendtype, p.call->recvtype}, request);
}

}  // namespace mcrp
