// The device-only point-to-point protocol, one Engine per asserted communicator (p2p/assertion.h).
//
// Matching stays the base MPI's: each message is a header (p2p/wire.h) sent on the user's
// communicator with the user's destination and tag, and received by a receive the base MPI
// matches with the user's source and tag. Small payloads travel inside the header. A large one
// travels on the engine's Channel (NCCL) once matched: the receiver answers the header with a
// clear-to-send naming the transfer's index in that direction and the bytes it accepts, so both
// sides know every transfer in the same order.
//
// NCCL runs one group at a time on a communicator's stream, and a group blocks the stream until
// every call in it has met its peer: two ranks that each launched a group needing the other's
// next group would wait forever (a ring of Isend/Irecv does exactly this). So transfers run in
// epochs: a group holds every ready transfer between one pair of ranks, both directions, and a
// rank has at most one group in flight. The lower rank of a pair proposes (with the transfer
// ranges of both directions); the higher one accepts and launches at once, or rejects when it is
// busy; the proposer launches on acceptance. The acceptance may lengthen the proposer's sends to
// every transfer the higher rank has cleared by then (its clear-to-sends reach the proposer before
// the acceptance), so one-way proposals made while the clear-to-sends still arrive do not cost a
// second group. Only lower ranks propose and a busy rank rejects, so
// the highest proposing rank always finds its partner free or about to be: no deadlock.
//
// Probes must report the payload's size, which only the header holds, so a probe takes the header
// out of the base MPI (MPI_Improbe + MPI_Mrecv) and holds it; receives look at held headers first,
// keeping MPI's order per sender by the headers' sequence numbers.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "p2p/channel.h"
#include "p2p/wire.h"
#include "runtime/requests.h"

namespace mcrp {

// The side of an operation that owns a transfer's memory and is told when the transfer is done.
class TransferEnd {
 public:
  virtual ~TransferEnd() = default;
  virtual void transfer_done(const Status& status) = 0;
};

// A receive waiting for its header: the engine polls it from every advance, so that a matched
// header is answered (clear-to-send) even while the application waits on something else.
class Listener {
 public:
  virtual ~Listener() = default;
  // Polls once; true when it needs no more polling.
  virtual bool listen() = 0;
};

// A header taken out of the base MPI by a probe, not yet received.
struct HeldHeader {
  int source = 0;
  int tag = 0;
  std::vector<char> message;  // header and inline payload, as sent
  std::uint64_t order = 0;    // when the library took it
  const wire::Header& header() const { return *reinterpret_cast<const wire::Header*>(message.data()); }
};

class Engine {
 public:
  // Collective over `comm` (an intracommunicator): duplicates it for control messages and for the
  // channel. `channel_kind` is "nccl" or "mpi"; `device` the NCCL channel's device.
  static std::shared_ptr<Engine> create(MPI_Comm comm, const char* channel_kind, int device);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t eager_limit() const { return eager_limit_; }
  std::size_t max_header_message() const { return sizeof(wire::Header) + eager_limit_; }
  int channel_device() const { return channel_->device(); }
  const char* channel_name() const { return channel_->name(); }

  // Sender side. The next header sequence number towards `dest`; a rendezvous send waiting for its
  // clear-to-send (returns its send_id); withdrawing one whose header was cancelled.
  std::uint64_t next_seq(int dest);
  std::uint64_t expect_clear_to_send(TransferEnd* end, void* data, std::size_t max_bytes);
  void forget_send(std::uint64_t send_id);

  // Receiver side: a matched rendezvous header from `sender`; `bytes` (at most what it announced)
  // go to `data` once the transfer runs.
  Status clear_to_send(int sender, std::uint64_t send_id, void* data, std::size_t bytes, TransferEnd* end);

  // Probes. take_earliest moves every header matching (source, tag) out of the base MPI, then
  // hands out the one MPI would match first (removing it when `remove`); false when none has
  // arrived. Receives consult held headers only once probes have been used on the communicator.
  bool take_earliest(int source, int tag, bool remove, HeldHeader* out, Status* error);
  bool probes_used() const { return probes_used_.load(std::memory_order_acquire); }

  // Operations that finish in the background (a buffered send): the engine owns and advances them.
  void adopt(std::unique_ptr<AsyncOp> op);
  // A receive to poll until its header has arrived.
  void listen(std::shared_ptr<Listener> listener);

  // Advances control messages, epochs and the channel. Never blocks.
  Status advance();

  // Releases the private communicators (MPI_Finalize, or the last reference going); the engine
  // does nothing afterwards.
  void shutdown();

  // Pending work across all engines: the background advance runs while it is above zero.
  static std::atomic<int>& pending_work();
  static void advance_all();
  static void shutdown_all();

 private:
  Engine(MPI_Comm comm, MPI_Comm control, MPI_Comm data, std::unique_ptr<Channel> channel);

  struct Transfer {
    TransferEnd* end = nullptr;
    void* data = nullptr;
    std::size_t bytes = 0;
  };
  struct Waiting {  // a rendezvous send before its clear-to-send
    TransferEnd* end = nullptr;
    void* data = nullptr;
    std::size_t max_bytes = 0;
  };
  struct Peer {
    std::uint64_t seq_out = 0;       // headers sent to the peer
    std::uint64_t cts_sent = 0;      // transfers peer -> me announced by my clear-to-sends
    std::uint64_t cts_received = 0;  // transfers me -> peer announced to me
    std::uint64_t done_in = 0;       // transfers peer -> me completed
    std::uint64_t done_out = 0;      // transfers me -> peer completed
    std::map<std::uint64_t, Transfer> in, out;  // by transfer index
  };
  enum class Epoch { idle, proposing, in_group };

  void post_control_receive();
  // Sends (and traces under MCRPMPI_DEBUG) one control message; the fields as wire.h describes.
  void send_control(int peer, wire::ControlType type, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0);
  Status handle(int from, const wire::Control& message);
  Status launch_group(int peer, std::uint64_t out_end, std::uint64_t in_end);
  Status finish_group(const Status& status);
  void propose_if_ready();
  void update_pending();  // under mutex_

  MPI_Comm comm_, control_, data_;
  int rank_ = 0, size_ = 1;
  std::size_t eager_limit_;
  std::unique_ptr<Channel> channel_;

  std::mutex mutex_;
  std::vector<Peer> peers_;
  std::map<std::uint64_t, Waiting> waiting_;
  std::uint64_t next_send_id_ = 1;
  int pending_ = 0;  // this engine's share of pending_work()

  MPI_Request control_request_ = MPI_REQUEST_NULL;
  wire::Control control_in_;
  std::list<std::pair<MPI_Request, std::unique_ptr<wire::Control>>> control_out_;

  Epoch epoch_state_ = Epoch::idle;
  int partner_ = -1;
  std::uint64_t epoch_ = 0;
  std::uint64_t proposed_out_end_ = 0, proposed_in_end_ = 0;  // the group being proposed (as proposer)
  std::vector<Transfer> group_;                                 // in flight with partner_
  std::uint64_t group_out_end_ = 0, group_in_end_ = 0;
  int next_candidate_ = 0;  // round-robin over peers to propose to

  std::atomic<bool> probes_used_{false};
  std::list<HeldHeader> held_;
  std::uint64_t held_order_ = 0;

  std::vector<std::unique_ptr<AsyncOp>> adopted_;
  std::vector<std::shared_ptr<Listener>> listeners_;
  bool advancing_ = false;
};

}  // namespace mcrp
