// The base-MPI channel: each transfer of a group is a synchronous send (MPI_Issend) or a receive on
// a private communicator, so a group completes only when the peers have launched their side, as an
// NCCL group would. Between two ranks, transfers of one direction match in launch order (one tag).
// A base MPI that takes device pointers (CUDA-aware) is handed the transfers' memory as it is, once
// the application's earlier work on the legacy default stream is done (polled, never waited for:
// launch and test run inside the library's progress); any other gets each transfer staged through
// pinned host memory, pipelined in chunks (p2p/chunked_transfer.h), so that setting
// MCRPMPI_P2P_CHANNEL=mpi never gives a base MPI device pointers it cannot read.
#include <algorithm>
#include <vector>

#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "p2p/channel.h"
#include "p2p/chunked_transfer.h"
#include "runtime/base_mpi.h"
#include "runtime/errors.h"
#include "tuning/decision.h"

namespace mcrp {
namespace {

class MpiChannel final : public Channel {
 public:
  explicit MpiChannel(MPI_Comm comm)
      : comm_(comm), staged_(!base_mpi_cuda_aware()), chunk_setting_(tuning::staged_chunk_bytes()) {}

  Status launch(const std::vector<ChannelTransfer>& group) override {
    if (staged_) {
      transfers_.clear();
      transfers_.resize(group.size());
      for (std::size_t i = 0; i < group.size(); ++i) MCRP_TRY(transfers_[i].start(group[i], comm_, chunk_setting_));
      return {};
    }
    group_ = group;
    requests_.clear();
    return mark_prior_device_work();
  }

  Status test(bool* done) override {
    if (staged_) return test_staged(done);
    *done = false;
    if (requests_.empty()) {  // the group is not handed to the base MPI yet
      for (const PriorWork& work : prior_work_) {
        device::DeviceGuard on_device(work.device);  // the event's device
        bool finished = false;
        MCRP_TRY(device::query_event(work.done.get(), &finished));
        if (!finished) return {};
      }
      MCRP_TRY(hand_over_group());
    }
    int flag = 0;
    const int rc = PMPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE);
    MCRP_TRY(from_base(rc));
    *done = flag != 0;
    return {};
  }

  const char* name() const override { return staged_ ? "mpi (staged through host memory)" : "mpi"; }
  int device() const override { return -1; }

 private:
  // One event per device the group's memory is on, recorded on that device's copy stream, which
  // copy_stream orders after the application's work issued so far on the legacy default stream: a
  // send must not read, nor a receive write, the buffer before that work is done (the fill before
  // an MPI_Irecv would land after the message; a send would carry what its kernel has not written).
  Status mark_prior_device_work() {
    prior_work_.clear();
    for (const ChannelTransfer& t : group_) {
      const int device = std::max(device::locate(t.data).device, 0);
      auto on_same = [device](const PriorWork& work) { return work.device == device; };
      if (std::any_of(prior_work_.begin(), prior_work_.end(), on_same)) continue;
      PriorWork& work = prior_work_.emplace_back();
      work.device = device;
      device::DeviceGuard on_device(device);
      cudaStream_t stream = nullptr;
      MCRP_TRY(device::copy_stream(device, &stream));
      MCRP_TRY(device::record_event(stream, work.done));
    }
    return {};
  }

  Status hand_over_group() {
    requests_.assign(group_.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < group_.size(); ++i) {
      const ChannelTransfer& t = group_[i];
      const auto bytes = static_cast<MPI_Count>(t.bytes);
      const int rc = t.send ? PMPI_Issend_c(t.data, bytes, MPI_BYTE, t.peer, 0, comm_, &requests_[i])
                            : PMPI_Irecv_c(t.data, bytes, MPI_BYTE, t.peer, 0, comm_, &requests_[i]);
      MCRP_TRY(from_base(rc));
    }
    return {};
  }

  // Every transfer is advanced on each test, so a pair's two directions progress together. Sends
  // hand their chunks to the base MPI in the group's order (ChunkedTransfer::advance): a later
  // transfer whose first copy finished early would otherwise overtake an earlier one's last chunks
  // and the receiver would match them crosswise (truncation, or wrong data of equal sizes).
  Status test_staged(bool* done) {
    bool all = true;
    bool earlier_sends_handed_over = true;
    for (ChunkedTransfer& t : transfers_) {
      bool finished = false;
      MCRP_TRY(t.advance(comm_, earlier_sends_handed_over, &finished));
      earlier_sends_handed_over = earlier_sends_handed_over && t.handed_over();
      all = all && finished;
    }
    if (all) transfers_.clear();  // their pinned buffers go back to the pool now
    *done = all;
    return {};
  }

  MPI_Comm comm_;
  bool staged_;
  std::uint64_t chunk_setting_;
  std::vector<ChannelTransfer> group_;     // unstaged: the group launched last
  struct PriorWork {
    int device = 0;
    device::Event done;  // recorded on the device's copy stream
  };
  std::vector<PriorWork> prior_work_;      // unstaged: see mark_prior_device_work
  std::vector<MPI_Request> requests_;      // unstaged: empty until the group is handed over
  std::vector<ChunkedTransfer> transfers_;
};

}  // namespace

std::unique_ptr<Channel> make_mpi_channel(MPI_Comm comm) { return std::make_unique<MpiChannel>(comm); }

}  // namespace mcrp
