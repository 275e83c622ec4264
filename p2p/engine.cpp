#include "p2p/engine.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/progress.h"
#include "tuning/table.h"

namespace mcrp {
namespace {

// The tuning table's limit: rank 0's MCRPMPI_P2P_EAGER_LIMIT or tuning file, the same on every rank
// since MPI_Init installed the table (before any communicator can be asserted, hence before any
// engine). A rank that used its own value could send an inline payload larger than the header
// receive its peer posted (MPI_ERR_TRUNCATE). The tuning suite forces it alike on every rank
// (tuning::force_p2p_eager_limit) around making the communicators it measures.
std::size_t shared_eager_limit() { return static_cast<std::size_t>(tuning::p2p_eager_limit()); }

// MCRPMPI_DEBUG=1: one line per protocol step.
void trace(int rank, const char* what, int peer, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  if (!config().debug) return;
  std::fprintf(stderr, "mcrpmpi[%d]: p2p %s peer=%d %llu %llu %llu\n", rank, what, peer,
               static_cast<unsigned long long>(a), static_cast<unsigned long long>(b),
               static_cast<unsigned long long>(c));
}

// MCRPMPI_DEBUG=1: a control message sent or received (`direction`: "sent" or "got").
void trace_control(int rank, const char* direction, wire::ControlType type, int peer, std::uint64_t a,
                   std::uint64_t b, std::uint64_t c) {
  if (!config().debug) return;
  static const char* const names[] = {"?", "clear-to-send", "proposal", "acceptance", "rejection"};
  const auto index = static_cast<unsigned>(type);
  const std::string what = std::string(direction) + " " + names[index <= 4 ? index : 0];
  trace(rank, what.c_str(), peer, a, b, c);
}

bool matches(const HeldHeader& h, int source, int tag) {
  return (source == MPI_ANY_SOURCE || h.source == source) && (tag == MPI_ANY_TAG || h.tag == tag);
}

// Every engine, for the background advance.
struct Registry {
  std::mutex mutex;
  std::vector<std::weak_ptr<Engine>> engines;
};
Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: engines may go during exit
  return *instance;
}

}  // namespace

std::atomic<int>& Engine::pending_work() {
  static std::atomic<int> pending{0};
  return pending;
}

void Engine::advance_all() {
  std::vector<std::shared_ptr<Engine>> engines;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto it = r.engines.begin(); it != r.engines.end();) {
      if (auto engine = it->lock()) {
        engines.push_back(std::move(engine));
        ++it;
      } else {
        it = r.engines.erase(it);
      }
    }
  }
  for (const auto& engine : engines) engine->advance();  // errors surface in the ops that wait
}

std::shared_ptr<Engine> Engine::create(MPI_Comm comm, const char* channel_kind, int device) {
  MPI_Comm control = MPI_COMM_NULL, data = MPI_COMM_NULL;
  if (PMPI_Comm_dup(comm, &control) != MPI_SUCCESS) return nullptr;
  if (PMPI_Comm_dup(comm, &data) != MPI_SUCCESS) {
    PMPI_Comm_free(&control);
    return nullptr;
  }
  std::unique_ptr<Channel> channel = std::string(channel_kind) == "nccl" ? make_nccl_channel(data, device)
                                                                          : make_mpi_channel(data);
  if (!channel) {
    PMPI_Comm_free(&control);
    PMPI_Comm_free(&data);
    return nullptr;
  }
  std::shared_ptr<Engine> engine(new Engine(comm, control, data, std::move(channel)));
  static std::once_flag once;
  std::call_once(once, [] { register_background_work(&Engine::advance_all, &pending_work()); });
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.engines.push_back(engine);
  return engine;
}

Engine::Engine(MPI_Comm comm, MPI_Comm control, MPI_Comm data, std::unique_ptr<Channel> channel)
    : comm_(comm), control_(control), data_(data), eager_limit_(shared_eager_limit()),
      channel_(std::move(channel)) {
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
  peers_.resize(static_cast<std::size_t>(size_));
  next_candidate_ = (rank_ + 1) % size_;
  post_control_receive();
}

Engine::~Engine() { shutdown(); }

void Engine::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (control_ == MPI_COMM_NULL) return;
  pending_work().fetch_sub(pending_, std::memory_order_acq_rel);
  pending_ = 0;
  if (control_request_ != MPI_REQUEST_NULL) {
    PMPI_Cancel(&control_request_);
    PMPI_Wait(&control_request_, MPI_STATUS_IGNORE);
  }
  for (auto& [request, message] : control_out_) PMPI_Wait(&request, MPI_STATUS_IGNORE);
  control_out_.clear();
  channel_.reset();  // before its communicator goes
  PMPI_Comm_free(&data_);
  PMPI_Comm_free(&control_);
}

void Engine::shutdown_all() {
  std::vector<std::shared_ptr<Engine>> engines;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& weak : r.engines) {
      if (auto engine = weak.lock()) engines.push_back(std::move(engine));
    }
    r.engines.clear();
  }
  for (const auto& engine : engines) engine->shutdown();
}

void Engine::post_control_receive() {
  PMPI_Irecv(&control_in_, sizeof control_in_, MPI_BYTE, MPI_ANY_SOURCE, wire::kControlTag, control_,
             &control_request_);
}

void Engine::send_control(int peer, wire::ControlType type, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  trace_control(rank_, "sent", type, peer, a, b, c);
  auto owned = std::make_unique<wire::Control>();
  owned->type = type;
  owned->a = a;
  owned->b = b;
  owned->c = c;
  MPI_Request request = MPI_REQUEST_NULL;
  PMPI_Isend(owned.get(), sizeof *owned, MPI_BYTE, peer, wire::kControlTag, control_, &request);
  control_out_.emplace_back(request, std::move(owned));
}

void Engine::update_pending() {
  int pending = static_cast<int>(waiting_.size() + adopted_.size() + listeners_.size()) +
                (epoch_state_ != Epoch::idle ? 1 : 0);
  for (const Peer& p : peers_) pending += static_cast<int>(p.in.size() + p.out.size());
  pending_work().fetch_add(pending - pending_, std::memory_order_acq_rel);
  pending_ = pending;
}

std::uint64_t Engine::next_seq(int dest) {
  std::lock_guard<std::mutex> lock(mutex_);
  return peers_[dest].seq_out++;
}

std::uint64_t Engine::expect_clear_to_send(TransferEnd* end, void* data, std::size_t max_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t id = next_send_id_++;
  waiting_[id] = Waiting{end, data, max_bytes};
  update_pending();
  return id;
}

void Engine::forget_send(std::uint64_t send_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_.erase(send_id);
  update_pending();
}

Status Engine::clear_to_send(int sender, std::uint64_t send_id, void* data, std::size_t bytes, TransferEnd* end) {
  std::lock_guard<std::mutex> lock(mutex_);
  Peer& p = peers_[sender];
  const std::uint64_t index = p.cts_sent++;
  p.in[index] = Transfer{end, data, bytes};
  send_control(sender, wire::ControlType::clear_to_send, send_id, index, bytes);
  update_pending();
  return {};
}

bool Engine::take_earliest(int source, int tag, bool remove, HeldHeader* out, Status* error) {
  probes_used_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  // Everything matching that has arrived, out of the base MPI, in MPI's order.
  for (;;) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    if (PMPI_Improbe(source, tag, comm_, &flag, &message, &status) != MPI_SUCCESS || !flag) break;
    MPI_Count bytes = 0;
    PMPI_Get_count_c(&status, MPI_BYTE, &bytes);
    HeldHeader held;
    held.source = status.MPI_SOURCE;
    held.tag = status.MPI_TAG;
    held.message.resize(static_cast<std::size_t>(bytes));
    held.order = held_order_++;
    PMPI_Mrecv_c(held.message.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    if (held.message.size() < sizeof(wire::Header) || held.header().magic != wire::kHeaderMagic) {
      *error = Status(MPI_ERR_OTHER, "a message without the library's header arrived on a communicator asserted "
                                     "to carry device memory only (was it sent from host memory?)");
      return false;
    }
    held_.push_back(std::move(held));
  }
  // Per sender, MPI matches the earliest sent (lowest sequence number); across senders, take the
  // one that arrived first.
  std::map<int, std::list<HeldHeader>::iterator> first_per_sender;
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (!matches(*it, source, tag)) continue;
    auto [slot, added] = first_per_sender.emplace(it->source, it);
    if (!added && it->header().seq < slot->second->header().seq) slot->second = it;
  }
  auto best = held_.end();
  for (const auto& [sender, it] : first_per_sender) {
    if (best == held_.end() || it->order < best->order) best = it;
  }
  if (best == held_.end()) return false;
  *out = *best;
  if (remove) held_.erase(best);
  return true;
}

void Engine::adopt(std::unique_ptr<AsyncOp> op) {
  std::lock_guard<std::mutex> lock(mutex_);
  adopted_.push_back(std::move(op));
  update_pending();
}

void Engine::listen(std::shared_ptr<Listener> listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_.push_back(std::move(listener));
  update_pending();
}

Status Engine::launch_group(int peer, std::uint64_t out_end, std::uint64_t in_end) {
  Peer& p = peers_[peer];
  std::vector<ChannelTransfer> group;
  group_.clear();
  // Each direction in transfer order: NCCL matches a pair's calls of one direction in order.
  for (std::uint64_t k = p.done_out; k < out_end; ++k) {
    const Transfer& t = p.out.at(k);
    group.push_back(ChannelTransfer{peer, true, t.data, t.bytes});
    group_.push_back(t);
  }
  for (std::uint64_t k = p.done_in; k < in_end; ++k) {
    const Transfer& t = p.in.at(k);
    group.push_back(ChannelTransfer{peer, false, t.data, t.bytes});
    group_.push_back(t);
  }
  partner_ = peer;
  group_out_end_ = out_end;
  group_in_end_ = in_end;
  epoch_state_ = Epoch::in_group;
  trace(rank_, "launch group", peer, out_end - p.done_out, in_end - p.done_in, 0);
  return channel_->launch(group);
}

Status Engine::finish_group(const Status& status) {
  Peer& p = peers_[partner_];
  for (std::uint64_t k = p.done_out; k < group_out_end_; ++k) p.out.erase(k);
  for (std::uint64_t k = p.done_in; k < group_in_end_; ++k) p.in.erase(k);
  p.done_out = group_out_end_;
  p.done_in = group_in_end_;
  trace(rank_, "group done", partner_, group_.size(), status.ok() ? 0 : 1, 0);
  for (const Transfer& t : group_) t.end->transfer_done(status);
  group_.clear();
  epoch_state_ = Epoch::idle;
  return status;
}

Status Engine::handle(int from, const wire::Control& m) {
  Peer& p = peers_[from];
  trace_control(rank_, "got", m.type, from, m.a, m.b, m.c);
  switch (m.type) {
    case wire::ControlType::clear_to_send: {
      const auto it = waiting_.find(m.a);
      if (it == waiting_.end() || m.b != p.cts_received) {
        return Status(MPI_ERR_INTERN, "clear-to-send for an unknown or out-of-order send");
      }
      p.out[m.b] = Transfer{it->second.end, it->second.data, static_cast<std::size_t>(m.c)};
      ++p.cts_received;
      waiting_.erase(it);
      return {};
    }
    case wire::ControlType::propose: {
      if (epoch_state_ != Epoch::idle) {
        send_control(from, wire::ControlType::reject, m.a);
        return {};
      }
      // The acceptance goes out before the launch: the proposer launches its half on it, and this
      // rank's half may sit in the launch a while. A launch on a blocking NCCL communicator makes
      // CUDA calls on this thread after the group's kernel is out (its completion event), and
      // another thread's cudaFree holds CUDA's context lock until that kernel ends -- which takes
      // the proposer's half. Launch first, and the acceptance waited for the kernel that waited for
      // it (test_p2p --threads on the H200, 2026-11-27: one thread's cudaFree, the other in
      // cudaEventRecord after ncclGroupEnd's launch, the peer polling for the acceptance).
      // The proposer's sends to me are my receives, and the reverse. My receives go up to every
      // clear-to-send I have sent, not only those the proposal counts: the proposer has the later
      // ones before my acceptance (one sender, one tag, one communicator: MPI keeps their order),
      // and a one-way proposal (osu_bw's first clear-to-sends, osu_bibw's other direction still
      // being cleared) would otherwise leave them to a second group after this one.
      // The other direction cannot grow: the proposal follows every clear-to-send it counts.
      send_control(from, wire::ControlType::accept, m.a, p.cts_sent);
      const Status launched = launch_group(from, m.c, p.cts_sent);
      return launched.ok() ? launched : finish_group(launched);
    }
    case wire::ControlType::accept:
      if (epoch_state_ != Epoch::proposing || from != partner_ || m.a != epoch_ || m.b < proposed_out_end_ ||
          m.b > p.cts_received) {
        return Status(MPI_ERR_INTERN, "unexpected acceptance of a transfer group");
      }
      {
        const Status launched = launch_group(from, m.b, proposed_in_end_);
        return launched.ok() ? launched : finish_group(launched);
      }
    case wire::ControlType::reject:
      if (epoch_state_ == Epoch::proposing && from == partner_ && m.a == epoch_) epoch_state_ = Epoch::idle;
      return {};
  }
  return Status(MPI_ERR_INTERN, "unknown control message");
}

void Engine::propose_if_ready() {
  if (epoch_state_ != Epoch::idle) return;
  // Transfers to itself need no partner: both ends are here, one group runs them (a send's
  // clear-to-send, from this rank to itself, arrives after the receive's end was recorded).
  Peer& self = peers_[rank_];
  if (self.cts_received > self.done_out) {
    const Status launched = launch_group(rank_, self.cts_received, self.cts_received);
    if (!launched.ok()) finish_group(launched);
    return;
  }
  // Only towards higher ranks; lower ranks propose to this one.
  for (int step = 0; step < size_; ++step) {
    const int peer = (next_candidate_ + step) % size_;
    if (peer <= rank_) continue;
    const Peer& p = peers_[peer];
    if (p.cts_received == p.done_out && p.cts_sent == p.done_in) continue;
    next_candidate_ = (peer + 1) % size_;
    partner_ = peer;
    ++epoch_;
    proposed_out_end_ = p.cts_received;
    proposed_in_end_ = p.cts_sent;
    send_control(peer, wire::ControlType::propose, epoch_, proposed_out_end_, proposed_in_end_);
    epoch_state_ = Epoch::proposing;
    return;
  }
}

Status Engine::advance() {
  std::vector<std::unique_ptr<AsyncOp>> adopted;
  std::vector<std::shared_ptr<Listener>> listeners;
  Status result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (advancing_ || control_ == MPI_COMM_NULL) return {};  // re-entered from an op below, or shut down
    advancing_ = true;
    // Control messages, in the order each peer sent them.
    for (;;) {
      int flag = 0;
      MPI_Status status;
      if (control_request_ == MPI_REQUEST_NULL || PMPI_Test(&control_request_, &flag, &status) != MPI_SUCCESS || !flag) break;
      const wire::Control message = control_in_;
      post_control_receive();
      const Status handled = handle(status.MPI_SOURCE, message);
      if (!handled.ok() && result.ok()) result = handled;
    }
    for (auto it = control_out_.begin(); it != control_out_.end();) {
      int flag = 0;
      PMPI_Test(&it->first, &flag, MPI_STATUS_IGNORE);
      it = flag ? control_out_.erase(it) : std::next(it);
    }
    if (epoch_state_ == Epoch::in_group) {
      bool done = false;
      const Status tested = channel_->test(&done);
      if (!tested.ok()) {
        finish_group(tested);
        if (result.ok()) result = tested;
      } else if (done) {
        finish_group(Status());
      }
    }
    adopted.swap(adopted_);
    listeners.swap(listeners_);
  }
  // Receives and adopted ops advance outside the lock (they come back to this engine: a matched
  // header's clear-to-send, an op's own advance), and before the proposal below, so that it
  // carries the clear-to-sends they send now: proposed first, osu_bibw's iterations ran each
  // direction in a group of its own.
  std::vector<std::shared_ptr<Listener>> still_listening;
  for (auto& listener : listeners) {
    if (!listener->listen()) still_listening.push_back(std::move(listener));
  }
  std::vector<std::unique_ptr<AsyncOp>> unfinished;
  for (auto& op : adopted) {
    bool done = false;
    const Status status = op->progress(&done);
    if (!done && status.ok()) unfinished.push_back(std::move(op));
  }
  listeners.clear();  // outside the lock: a receive's last reference may go here
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& op : unfinished) adopted_.push_back(std::move(op));
  // The storage goes back when no receive came meanwhile, so that the next listen() does not
  // allocate (a blocking device receive's one listen a call, cost.device_p2p_calls).
  if (listeners_.empty()) listeners_.swap(listeners);
  for (auto& listener : still_listening) listeners_.push_back(std::move(listener));
  propose_if_ready();
  advancing_ = false;
  update_pending();
  return result;
}

}  // namespace mcrp
