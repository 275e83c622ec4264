#include "p2p/rendezvous.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "runtime/device_view.h"
#include "runtime/errors.h"
#include "runtime/profile.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

// Waits that may legitimately last (a receive whose sender comes later): MPI progress and the
// library's, no deadline.
class UnboundedProgress final : public device::ProgressHook {
 public:
  Status poll() override {
    drive_mpi_progress();
    advance_library();
    return {};
  }
};

// The stream copies of one operation go on: the copy stream of the channel's device, or of the
// buffer's when the channel takes memory anywhere.
int copy_device_for(const Engine& engine, int buffer_device) {
  return engine.channel_device() >= 0 ? engine.channel_device() : std::max(buffer_device, 0);
}

Status copy_stream_for(const Engine& engine, int buffer_device, cudaStream_t* stream) {
  return device::copy_stream(copy_device_for(engine, buffer_device), stream);
}

// ---- library message handles (MPI_Mprobe / MPI_Improbe on asserted communicators) --------------
// MPICH handles carry a kind in their two top bits and never use 00 for a valid object; the
// library's messages do, so they can never be mistaken for the base MPI's.
constexpr int kMessageBase = 0x0c000000;
constexpr int kMessageMask = 0x00ffffff;

struct LibraryMessage {
  std::shared_ptr<Engine> engine;
  HeldHeader header;
};

struct MessageTable {
  std::mutex mutex;
  std::map<int, LibraryMessage> entries;
  int next = 0;
};
MessageTable& messages() {
  static MessageTable* instance = new MessageTable;
  return *instance;
}

MPI_Message add_message(std::shared_ptr<Engine> engine, HeldHeader header) {
  MessageTable& t = messages();
  std::lock_guard<std::mutex> lock(t.mutex);
  const int handle = kMessageBase | (t.next++ & kMessageMask);
  t.entries[handle] = LibraryMessage{std::move(engine), std::move(header)};
  return handle;
}

bool take_message(MPI_Message handle, LibraryMessage* out) {
  MessageTable& t = messages();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.entries.find(handle);
  if (it == t.entries.end()) return false;
  *out = std::move(it->second);
  t.entries.erase(it);
  return true;
}

// ---- sending ------------------------------------------------------------------------------------

// One send on an asserted communicator. Inline: the header and the payload go in one base-MPI
// message. Rendezvous: the header goes alone; the payload follows on the channel once the receiver
// has matched it and the pair's epoch comes. With `own_copy` (buffered sends, and the send half of
// a Sendrecv_replace) the payload is copied first, so the user's buffer is free at once.
class SendOp final : public AsyncOp, public TransferEnd {
 public:
  SendOp(std::shared_ptr<Engine> engine, const P2PPrepared& p, bool own_copy)
      : engine_(std::move(engine)), call_(*p.call), side_(p.send), type_(p.send_type), device_(p.device),
        own_copy_(own_copy) {
    if (call_.kind == P2PKind::sendrecv_replace) {  // the one buffer, read first
      side_ = p.recv;
      type_ = p.recv_type;
    }
    side_.written = false;
    side_.read = true;
  }

  Status start() {
    const std::size_t bytes = static_cast<std::size_t>(side_.total_count() * type_.size);
    wire::Header header;
    header.seq = engine_->next_seq(call_.dest);
    header.bytes = bytes;
    cudaStream_t stream = nullptr;
    device::DeviceGuard on_device(copy_device_for(*engine_, device_));  // the waits' events: the stream's device
    MCRP_TRY(copy_stream_for(*engine_, device_, &stream));
    UnboundedProgress progress;
    rendezvous_ = bytes > engine_->eager_limit();
    if (!rendezvous_) {
      header.flags = wire::kInline;
      MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, sizeof header + bytes, message_));
      if (bytes > 0) {
        // Contiguous bytes come straight off the device; others are packed into device scratch first.
        const char* payload = side_.base;
        DeviceView view;
        if (!type_.contiguous()) {
          MCRP_TRY(view.prepare(side_, type_, -1, stream, progress));
          payload = view.data;
        }
        MCRP_TRY(device::copy_async(message_.data() + sizeof header, payload, bytes, stream, "cudaMemcpyAsync (device to host)"));
        MCRP_TRY(device::wait_stream(stream, progress));
      }
    } else {
      MCRP_TRY(view_.prepare(side_, type_, engine_->channel_device(), stream, progress));
      char* data = view_.data + view_.offset(0);
      if (own_copy_ && data == side_.base) {
        MCRP_TRY(device::acquire(device::BufferKind::device, std::max(engine_->channel_device(), device_), bytes, copy_));
        MCRP_TRY(device::copy_async(copy_.data(), data, bytes, stream, "cudaMemcpyAsync (device to device)"));
        data = copy_.data();
      }
      MCRP_TRY(device::wait_stream(stream, progress));
      MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, sizeof header, message_));
      header.send_id = send_id_ = engine_->expect_clear_to_send(this, data, bytes);
    }
    std::memcpy(message_.data(), &header, sizeof header);
    const auto length = static_cast<MPI_Count>(sizeof header + (rendezvous_ ? 0 : bytes));
    const MPI_Comm comm = call_.comm;
    int rc;
    if (call_.kind == P2PKind::ssend && !rendezvous_) {  // a rendezvous completes only once matched anyway
      rc = PMPI_Issend_c(message_.data(), length, MPI_BYTE, call_.dest, call_.sendtag, comm, &header_request_);
    } else if (call_.kind == P2PKind::rsend) {
      rc = PMPI_Irsend_c(message_.data(), length, MPI_BYTE, call_.dest, call_.sendtag, comm, &header_request_);
    } else {
      rc = PMPI_Isend_c(message_.data(), length, MPI_BYTE, call_.dest, call_.sendtag, comm, &header_request_);
    }
    return from_base(rc);
  }

  Status progress(bool* done) override {
    MCRP_TRY(engine_->advance());
    if (cancel_requested_ && header_request_ != MPI_REQUEST_NULL) {
      cancel_requested_ = false;
      PMPI_Cancel(&header_request_);
    }
    if (header_request_ != MPI_REQUEST_NULL) {
      int flag = 0;
      MPI_Status status;
      MCRP_TRY(from_base(PMPI_Test(&header_request_, &flag, &status)));
      if (!flag) return {};
      int cancelled = 0;
      PMPI_Test_cancelled(&status, &cancelled);
      if (cancelled) {
        cancelled_ = true;
        if (rendezvous_) engine_->forget_send(send_id_);
        *done = true;
        return {};
      }
    }
    if (rendezvous_ && !transferred_.load(std::memory_order_acquire)) return {};
    *done = true;
    return transfer_status_;
  }

  void fill_status(MPI_Status* status) const override {
    AsyncOp::fill_status(status);
    PMPI_Status_set_cancelled(status, cancelled_ ? 1 : 0);
  }
  void cancel() override { cancel_requested_ = true; }
  void transfer_done(const Status& status) override {
    transfer_status_ = status;
    transferred_.store(true, std::memory_order_release);
  }

 private:
  std::shared_ptr<Engine> engine_;
  P2PCall call_;
  BufferSide side_;
  TypeInfo type_;
  int device_;
  bool own_copy_;
  bool rendezvous_ = false;
  std::uint64_t send_id_ = 0;
  device::Buffer message_;  // pinned: header (and inline payload)
  device::Buffer copy_;     // own copy of a rendezvous payload
  DeviceView view_;         // rendezvous payload on the channel's device
  MPI_Request header_request_ = MPI_REQUEST_NULL;
  bool cancel_requested_ = false;
  bool cancelled_ = false;
  std::atomic<bool> transferred_{false};
  Status transfer_status_;
};

// ---- receiving ----------------------------------------------------------------------------------

// One receive on an asserted communicator: its header is matched by the base MPI (or was taken out
// by a probe); an inline payload is copied to the device at once, a rendezvous one arrives on the
// channel after the clear-to-send. Only the bytes delivered are written; more than the buffer
// holds is MPI_ERR_TRUNCATE (the first bytes are delivered, and the sender completes normally).
// While it waits for its header, the engine polls it too (Listener), so that a sender is answered
// even when this rank waits on something else; hence the shared state and the lock.
class Receive final : public Listener, public TransferEnd, public std::enable_shared_from_this<Receive> {
 public:
  Receive(std::shared_ptr<Engine> engine, const P2PPrepared& p)
      : engine_(std::move(engine)), side_(p.recv), type_(p.recv_type), device_(p.device) {
    side_.read = false;
    side_.written = true;
    capacity_ = static_cast<std::size_t>(side_.total_count() * type_.size);
  }

  // Posts the header receive, or takes a held header (probes have been used, or an Mrecv).
  Status start(int source, int tag, const HeldHeader* held) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held != nullptr) return on_header(held->message.data(), held->message.size(), held->source, held->tag);
    if (engine_->probes_used()) {
      HeldHeader earliest;
      Status error;
      if (engine_->take_earliest(source, tag, true, &earliest, &error)) {
        return on_header(earliest.message.data(), earliest.message.size(), earliest.source, earliest.tag);
      }
      MCRP_TRY(error);
    }
    MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, engine_->max_header_message(), header_buffer_));
    MCRP_TRY(from_base(PMPI_Irecv_c(header_buffer_.data(), static_cast<MPI_Count>(engine_->max_header_message()),
                                    MPI_BYTE, source, tag, engine_->comm(), &header_request_)));
    engine_->listen(shared_from_this());
    return {};
  }

  bool listen() override {
    PollTurn turn(polling_);
    if (!turn) return false;  // being polled already: keep listening
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::header) poll_header();
    return phase_ != Phase::header;
  }

  Status poll(bool* done) {
    MCRP_TRY(engine_->advance());
    PollTurn turn(polling_);
    if (!turn) return {};  // being polled already: not done yet
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::header) poll_header();
    MCRP_TRY(error_);
    if (phase_ == Phase::transfer) {
      if (!transferred_.load(std::memory_order_acquire)) return {};
      MCRP_TRY(transfer_status_);
      MCRP_TRY(finish_view());
      phase_ = Phase::done;
    }
    if (phase_ != Phase::done) return {};
    *done = true;
    if (announced_ > capacity_) {
      truncated_ = true;  // after every copy: no device work left behind
      return Status(MPI_ERR_TRUNCATE, "message of " + std::to_string(announced_) + " bytes, receive buffer of " +
                                          std::to_string(capacity_));
    }
    return {};
  }

  bool truncated() const { return truncated_.load(std::memory_order_acquire); }
  void fill_status(MPI_Status* status) const {
    PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(accepted_));
    PMPI_Status_set_cancelled(status, cancelled_ ? 1 : 0);
    status->MPI_SOURCE = source_;
    status->MPI_TAG = tag_;
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::header) cancel_requested_ = true;
  }
  void transfer_done(const Status& status) override {
    transfer_status_ = status;
    transferred_.store(true, std::memory_order_release);
  }

 private:
  enum class Phase { header, transfer, done };

  // listen() and poll() wait inside (an inline payload's or a packed receive's copy to the device,
  // the copy back after a transfer), and those waits drive library progress, which polls this
  // receive again: as a listener, or as the request being waited on. Such a re-entry (or another
  // thread meanwhile) gets no turn and answers "not yet" instead of locking mutex_ a second time,
  // which deadlocked the thread as soon as a copy was not complete at its first query (a GPU).
  class PollTurn {
   public:
    explicit PollTurn(std::atomic<bool>& polling) : polling_(polling), held_(!polling.exchange(true)) {}
    ~PollTurn() {
      if (held_) polling_.store(false);
    }
    PollTurn(const PollTurn&) = delete;
    PollTurn& operator=(const PollTurn&) = delete;
    explicit operator bool() const { return held_; }

   private:
    std::atomic<bool>& polling_;
    bool held_;
  };

  // Under mutex_: tests the header receive and goes on when it has matched (errors kept in error_).
  void poll_header() {
    if (!error_.ok()) return;
    if (cancel_requested_) {
      cancel_requested_ = false;
      PMPI_Cancel(&header_request_);
    }
    int flag = 0;
    MPI_Status status;
    error_ = from_base(PMPI_Test(&header_request_, &flag, &status));
    if (!error_.ok() || !flag) return;
    int cancelled = 0;
    PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled) {
      cancelled_ = true;
      phase_ = Phase::done;
      return;
    }
    MPI_Count length = 0;
    PMPI_Get_count_c(&status, MPI_BYTE, &length);
    error_ = on_header(header_buffer_.data(), static_cast<std::size_t>(length), status.MPI_SOURCE, status.MPI_TAG);
    if (!error_.ok()) phase_ = Phase::done;
  }

  Status on_header(const char* message, std::size_t length, int source, int tag) {
    wire::Header header;
    if (length < sizeof header) return not_a_header();
    std::memcpy(&header, message, sizeof header);
    if (header.magic != wire::kHeaderMagic) return not_a_header();
    source_ = source;
    tag_ = tag;
    announced_ = header.bytes;
    accepted_ = std::min<std::size_t>(header.bytes, capacity_);
    // The elements the payload reaches; only they are written.
    reached_ = side_;
    reached_.blocks = {Block{0, type_.size > 0 ? static_cast<MPI_Count>((accepted_ + type_.size - 1) / type_.size) : 0}};
    device::DeviceGuard on_device(copy_device_for(*engine_, device_));  // the waits' events: the stream's device
    MCRP_TRY(copy_stream_for(*engine_, device_, &stream_));
    UnboundedProgress progress;
    const bool inline_payload = (header.flags & wire::kInline) != 0;
    MCRP_TRY(view_.prepare(reached_, type_, inline_payload ? -1 : engine_->channel_device(), stream_, progress));
    char* target = view_.data + (view_.blocks() == 0 ? 0 : view_.offset(0));
    if (inline_payload) {
      if (length < sizeof header + accepted_) return not_a_header();
      MCRP_TRY(device::copy_async(target, message + sizeof header, accepted_, stream_, "cudaMemcpyAsync (host to device)"));
      MCRP_TRY(finish_view());
      phase_ = Phase::done;
      return {};
    }
    phase_ = Phase::transfer;
    return engine_->clear_to_send(source, header.send_id, target, accepted_, this);
  }

  // Unpacks or copies back what view_ staged, and waits for it.
  Status finish_view() {
    device::DeviceGuard on_device(copy_device_for(*engine_, device_));  // polled from any thread
    UnboundedProgress progress;
    MCRP_TRY(view_.finish(reached_, stream_, progress, accepted_));
    return device::wait_stream(stream_, progress);
  }

  static Status not_a_header() {
    return Status(MPI_ERR_OTHER, "a message without the library's header arrived on a communicator asserted to "
                                 "carry device memory only (was it sent from host memory?)");
  }

  std::shared_ptr<Engine> engine_;
  std::mutex mutex_;
  std::atomic<bool> polling_{false};  // a PollTurn is held
  BufferSide side_, reached_;
  TypeInfo type_;
  int device_;
  std::size_t capacity_ = 0, announced_ = 0, accepted_ = 0;
  int source_ = MPI_ANY_SOURCE, tag_ = MPI_ANY_TAG;
  Phase phase_ = Phase::header;
  std::atomic<bool> truncated_{false};  // failed with MPI_ERR_TRUNCATE only
  Status error_;
  device::Buffer header_buffer_;
  MPI_Request header_request_ = MPI_REQUEST_NULL;
  cudaStream_t stream_ = nullptr;
  DeviceView view_;
  bool cancel_requested_ = false;
  bool cancelled_ = false;
  std::atomic<bool> transferred_{false};
  Status transfer_status_;
};

class RecvOp final : public AsyncOp {
 public:
  explicit RecvOp(std::shared_ptr<Receive> receive) : receive_(std::move(receive)) {}
  Status progress(bool* done) override { return receive_->poll(done); }
  void fill_status(MPI_Status* status) const override { receive_->fill_status(status); }
  void cancel() override { receive_->cancel(); }
  bool left_device_work() const override { return !receive_->truncated(); }

 private:
  std::shared_ptr<Receive> receive_;
};

// A Sendrecv (or Sendrecv_replace) as one op: both halves at once, the receive's status. The
// replace form sends from its own copy, so the receive may land in the buffer meanwhile.
class SendRecvOp final : public AsyncOp {
 public:
  SendRecvOp(std::unique_ptr<SendOp> send, std::unique_ptr<RecvOp> recv)
      : send_(std::move(send)), recv_(std::move(recv)) {}
  // A half that fails ends; the other runs on to its end before the op reports the failure: a send
  // still waiting for its clear-to-send, or still being read by the base MPI, must outlive the
  // receive's MPI_ERR_TRUNCATE (the peer is owed its message).
  Status progress(bool* done) override {
    advance_half(*send_, &send_done_, &send_failure_);
    advance_half(*recv_, &recv_done_, &recv_failure_);
    if (!send_done_ || !recv_done_) return {};
    *done = true;
    return send_failure_.ok() ? recv_failure_ : send_failure_;
  }
  bool left_device_work() const override {
    return !send_failure_.ok() || (!recv_failure_.ok() && recv_->left_device_work());
  }
  void fill_status(MPI_Status* status) const override { recv_->fill_status(status); }
  void cancel() override {
    send_->cancel();
    recv_->cancel();
  }

 private:
  static void advance_half(AsyncOp& half, bool* done, Status* failure) {
    if (*done) return;
    *failure = half.progress(done);
    if (!failure->ok()) *done = true;
  }

  std::unique_ptr<SendOp> send_;
  std::unique_ptr<RecvOp> recv_;
  bool send_done_ = false, recv_done_ = false;
  Status send_failure_, recv_failure_;
};

// Runs an op to completion, keeping MPI and the library progressing.
Status wait_op(AsyncOp& op, MPI_Status* status) {
  profile::StepTimer waiting(profile::Step::wait);
  WaitNote note("a blocking point-to-point call on a device-only communicator", nullptr);
  for (;;) {
    bool done = false;
    const Status result = op.progress(&done);
    if (done || !result.ok()) {
      if (!result.ok() && op.left_device_work()) device::note_abandoned_work();  // copies may still be queued
      if (status != MPI_STATUS_IGNORE) op.fill_status(status);
      return result;
    }
    drive_mpi_progress();
    advance_library();
    note.polled();
  }
}

Status start_op(const std::shared_ptr<Engine>& engine, const P2PPrepared& p, const HeldHeader* held,
                std::unique_ptr<AsyncOp>* out) {
  profile::StepTimer starting(profile::Step::queue);
  const P2PCall& c = *p.call;
  const bool sends = p.send.significant() || (c.kind == P2PKind::sendrecv_replace && p.recv.read);
  const bool receives = p.recv.significant() && p.recv.written;
  std::unique_ptr<SendOp> send;
  std::unique_ptr<RecvOp> recv;
  if (sends) {
    send = std::make_unique<SendOp>(engine, p, c.kind == P2PKind::bsend || c.kind == P2PKind::sendrecv_replace);
    MCRP_TRY(send->start());
  }
  if (receives) {
    auto receive = std::make_shared<Receive>(engine, p);
    MCRP_TRY(receive->start(c.source, c.recvtag, held));
    recv = std::make_unique<RecvOp>(std::move(receive));
  }
  if (send && recv) {
    *out = std::make_unique<SendRecvOp>(std::move(send), std::move(recv));
  } else if (send) {
    *out = std::move(send);
  } else {
    *out = std::move(recv);
  }
  return {};
}

}  // namespace

Status run_asserted(const std::shared_ptr<Engine>& engine, const P2PPrepared& p, Mode mode, MPI_Request* request,
                    MPI_Status* status) {
  const P2PCall& c = *p.call;
  LibraryMessage matched;
  const HeldHeader* held = nullptr;
  if (c.kind == P2PKind::mrecv) {
    if (!take_message(*c.message, &matched)) return Status(MPI_ERR_REQUEST, "unknown message handle");
    *c.message = MPI_MESSAGE_NULL;
    held = &matched.header;
  }
  std::unique_ptr<AsyncOp> op;
  MCRP_TRY(start_op(engine, p, held, &op));
  if (c.kind == P2PKind::bsend) {
    // Buffered: the payload is the library's now; the call completes at once, the send goes on.
    engine->adopt(std::move(op));
    return mode == Mode::nonblocking ? start_completed(request) : Status();
  }
  if (mode == Mode::nonblocking) {
    return start_generalized(std::move(op), c.comm, c.entry, {c.sendtype, c.recvtype}, request);
  }
  return wait_op(*op, status);
}

Status probe_asserted(const std::shared_ptr<Engine>& engine, int source, int tag, int* flag, MPI_Message* message,
                      MPI_Status* status) {
  HeldHeader held;
  for (;;) {
    Status error;
    if (engine->take_earliest(source, tag, message != nullptr, &held, &error)) break;
    MCRP_TRY(error);
    MCRP_TRY(engine->advance());
    if (flag != nullptr) {  // Iprobe / Improbe: not yet
      // A polling program's probes are its progress: the other communicators' engines too.
      advance_background_work();
      *flag = 0;
      if (message != nullptr) *message = MPI_MESSAGE_NULL;
      return {};
    }
    drive_mpi_progress();
    advance_library();
  }
  if (flag != nullptr) *flag = 1;
  if (status != MPI_STATUS_IGNORE) {
    PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(held.header().bytes));
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = held.source;
    status->MPI_TAG = held.tag;
    status->MPI_ERROR = MPI_SUCCESS;
  }
  if (message != nullptr) *message = add_message(engine, std::move(held));
  return {};
}

bool is_library_message(MPI_Message message) {
  return (message & ~kMessageMask) == kMessageBase;
}

std::shared_ptr<Engine> engine_of_message(MPI_Message message) {
  MessageTable& t = messages();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.entries.find(message);
  return it == t.entries.end() ? nullptr : it->second.engine;
}

}  // namespace mcrp
