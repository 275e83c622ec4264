// The NCCL channel: one group of ncclSend/ncclRecv per launch, queued on the communicator like the
// collectives' NCCL work (runtime/nccl_comm.h: launched once the communicator is set up and any
// earlier enqueue has finished), completed by an event recorded after it.
#include <atomic>
#include <mutex>

#include "device/handles.h"
#include "device/ordered_streams.h"
#include "p2p/channel.h"
#include "runtime/launch_lock.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_comm.h"
#include "runtime/profile.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

class GroupLaunch final : public QueuedLaunch {
 public:
  GroupLaunch(NcclComm& comm, std::vector<ChannelTransfer> group) : comm_(comm), group_(std::move(group)) {}

  bool launch(const Status& setup) override {
    if (!setup.ok()) {
      finish(setup);
      return false;
    }
    device::DeviceGuard guard(comm_.device);
    // A receive writes the user's buffer: not before the application's earlier work on it.
    const Status ordered = device::order_after_legacy_stream(comm_.device, comm_.stream.get());
    if (!ordered.ok()) {
      finish(ordered);
      return false;
    }
    ncclResult_t rc = ncclSuccess;
    {
      profile::StepTimer launching(profile::Step::launch);
      NcclLaunchLock lock;
      rc = comm_.issue_transfers(group_);
    }
    if (rc == ncclInProgress) return true;  // NcclComm calls enqueued() once NCCL has finished
    enqueued(rc == ncclSuccess ? Status() : settle(comm_, rc, "ncclSend/ncclRecv group"));
    return false;
  }

  void enqueued(const Status& result) override {
    Status status = result;
    if (status.ok()) {
      device::DeviceGuard guard(comm_.device);
      status = device::record_event(comm_.stream.get(), done_);
    }
    if (!status.ok()) status = comm_.fail(status);
    finish(status);
  }

  // Done launching (or failed): status() says which; event() completes after the group.
  bool launched() const { return launched_.load(std::memory_order_acquire); }
  const Status& status() const { return status_; }
  cudaEvent_t event() const { return done_.get(); }

 private:
  void finish(const Status& status) {
    status_ = status;
    launched_.store(true, std::memory_order_release);
  }

  NcclComm& comm_;
  std::vector<ChannelTransfer> group_;
  device::Event done_;
  Status status_;
  std::atomic<bool> launched_{false};
};

class NcclChannel final : public Channel {
 public:
  NcclChannel(std::shared_ptr<NcclComm> comm) : comm_(std::move(comm)) {}
  ~NcclChannel() override {
    if (current_ && !current_->launched()) comm_->withdraw(current_.get());
  }

  Status launch(const std::vector<ChannelTransfer>& group) override {
    current_ = std::make_unique<GroupLaunch>(*comm_, group);
    return comm_->submit(current_.get());
  }

  Status test(bool* done) override {
    *done = false;
    if (!current_) return {};
    if (!current_->launched()) {
      // Only this channel's communicator (its queue holds group launches alone, which never wait):
      // the engine calls this holding its lock, and advancing every communicator could launch a
      // queued collective whose packing waits, driving library progress into this engine again.
      comm_->advance();
      if (!current_->launched()) return {};
    }
    MCRP_TRY(current_->status());
    // A failure leaves NCCL's state unknown and the group's kernels perhaps running: stopped, as
    // the collectives' failures stop theirs.
    Status state = device::query_event(current_->event(), done);
    if (state.ok() && !*done) state = nccl_async_error(comm_->handle);
    if (!state.ok()) return comm_->fail(state);
    if (!*done) return {};
    current_.reset();
    return {};
  }

  const char* name() const override { return "nccl"; }
  int device() const override { return comm_->device; }

 private:
  std::shared_ptr<NcclComm> comm_;
  std::unique_ptr<GroupLaunch> current_;
};

}  // namespace

std::unique_ptr<Channel> make_nccl_channel(MPI_Comm comm, int device) {
  std::shared_ptr<NcclComm> nccl;
  if (!nccl_comm_for(comm, device, &nccl).ok()) return nullptr;
  // Set up now, while every member is in the assertion's collective call: the setup advances only
  // through library calls on every member, so one set up at the first rendezvous would wait for a
  // member that has gone off computing (or sits in a call the library does not wrap) meanwhile.
  MpiProgress progress("the NCCL setup of a device-only communicator", nccl.get());
  if (!nccl->wait_setup(progress).ok()) return nullptr;
  return std::make_unique<NcclChannel>(std::move(nccl));
}

}  // namespace mcrp
