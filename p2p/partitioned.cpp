#include "p2p/partitioned.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "device/wait.h"
#include "p2p/profile_rows.h"
#include "runtime/base_mpi.h"
#include "runtime/buffer.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/handle_holds.h"
#include "runtime/memory_checks.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/requests.h"

namespace mcrp {
namespace {

// Where a receive partition stands in the current round.
enum class Delivery : unsigned char {
  pending,    // not known to have arrived
  copying,    // arrived; its copy to the device is queued (its event says when it is done)
  delivered,  // on the device
};

// The base MPI's MPI_Precv_init or MPI_Psend_init of `c` (buffer included).
int base_init(const PartitionedCall& c, MPI_Request* request) {
  profile::StepTimer in_base_mpi(profile::Step::wait);
  return c.receives ? PMPI_Precv_init(c.buf, c.partitions, c.count, c.type, c.peer, c.tag, c.comm, c.info, request)
                    : PMPI_Psend_init(c.buf, c.partitions, c.count, c.type, c.peer, c.tag, c.comm, c.info, request);
}

// The base MPI's MPI_Pready form that names `list`.
int base_ready(const PartitionList& list, MPI_Request request) {
  profile::StepTimer in_base_mpi(profile::Step::wait);
  switch (list.form) {
    case PartitionList::Form::one:
      return PMPI_Pready(list.low, request);
    case PartitionList::Form::range:
      return PMPI_Pready_range(list.low, list.high, request);
    case PartitionList::Form::list:
      return PMPI_Pready_list(list.length, list.list, request);
  }
  return MPI_ERR_INTERN;  // not reached: every form is listed
}

// A lock that notes its holder (PartitionedTransfer::holder_).
class HeldLock {
 public:
  HeldLock(std::mutex& mutex, std::atomic<std::thread::id>& holder) : lock_(mutex), holder_(holder) {
    holder_.store(std::this_thread::get_id(), std::memory_order_release);
  }
  ~HeldLock() { holder_.store(std::thread::id(), std::memory_order_release); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
  std::atomic<std::thread::id>& holder_;
};

// One partitioned request on device memory: the base MPI's request on the host image (on the device
// buffer itself for a CUDA-aware base MPI, staged_ false), and the partitions' progress in the round
// under way. Made only for buffers with bytes to move (on_device).
class PartitionedTransfer final : public PersistentAttachment,
                                  public std::enable_shared_from_this<PartitionedTransfer> {
 public:
  PartitionedTransfer(const PartitionedCall& call, const TypeInfo& type, device::PointerInfo where)
      : call_(call),
        type_(type),
        where_(where),
        staged_(!base_mpi_cuda_aware()),
        delivery_(static_cast<std::size_t>(call.partitions)),
        copies_(static_cast<std::size_t>(call.partitions)) {
    BufferSide one;
    one.base = static_cast<char*>(call.buf);
    one.type = call.type;
    one.blocks = {Block{0, call.count}};
    first_ = span_of(one, type);
    BufferSide all = one;
    all.blocks = {Block{0, call.count * call.partitions}};
    all.written = call.receives;
    whole_ = span_of(all, type);
    // A receive whose type has holes gets the device's bytes in the image first, so that copying a
    // partition's span back keeps the bytes between its elements.
    keep_holes_ = call.receives && !covers_span(all, type, whole_);
  }
  ~PartitionedTransfer() override {
    if (base_ != MPI_REQUEST_NULL) PMPI_Request_free(&base_);
  }
  PartitionedTransfer(const PartitionedTransfer&) = delete;
  PartitionedTransfer& operator=(const PartitionedTransfer&) = delete;

  // The image and the base MPI's request on it (staged), or the base MPI's request on the buffer.
  Status create() {
    if (!staged_) return from_base(base_init(call_, &base_));
    MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, whole_.bytes(), image_));
    PartitionedCall on_image = call_;
    on_image.buf = image_.data() - whole_.lo;
    return from_base(base_init(on_image, &base_));
  }

  MPI_Comm comm() const { return call_.comm; }
  P2PPath path() const { return staged_ ? P2PPath::staged : P2PPath::direct; }  // MCRPMPI_PROFILE's row

  // MPI_Start: a new round; *inner gets the request that completes it.
  Status start(MPI_Request* inner);
  Status ready(const PartitionList& list);
  Status arrived(int partition, int* flag);
  // The round's completion, polled by its request: the base MPI's request, then (receive) the
  // copies of every partition to the device.
  Status advance_round(bool* done);
  void fill_status(MPI_Status* status) const { *status = status_; }

 private:
  // Partition p's bytes: in the user's buffer from call_.buf + offset, in the image from
  // image_.data() + offset - whole_.lo.
  std::ptrdiff_t offset(int p) const { return first_.lo + static_cast<std::ptrdiff_t>(p) * call_.count * type_.extent; }
  char* device_bytes(int p) const { return static_cast<char*>(call_.buf) + offset(p); }
  char* image_bytes(int p) const { return image_.data() + (offset(p) - whole_.lo); }

  Status copy_stream(cudaStream_t* stream) const { return device::copy_stream(where_.device, stream); }
  Status check_partition(int p) const {
    if (p >= 0 && p < call_.partitions) return {};
    return Status(MPI_ERR_ARG, "partition " + std::to_string(p) + " of a request with " +
                                   std::to_string(call_.partitions) + " partitions");
  }
  // Partition p from the image to the device, queued on `stream`.
  Status copy_to_device(int p, cudaStream_t stream) const;
  // Queues partition p's copy to the device and notes its event (mutex_ held).
  Status queue_delivery(int p, cudaStream_t stream);
  // Runs queue(stream) on the copy stream, which is ordered after the application's earlier work on
  // the device's legacy default stream, and waits for the stream while keeping MPI progressing.
  template <class Queue>
  Status run_on_copy_stream(const char* what, Queue&& queue) const {
    device::DeviceGuard on_device(where_.device);
    cudaStream_t stream = nullptr;
    MCRP_TRY(copy_stream(&stream));
    MCRP_TRY(device::order_after_memory_device(where_, where_.device, stream));
    profile::StepTimer queueing(profile::Step::queue);
    MCRP_TRY(queue(stream));
    queueing.stop();
    MpiProgress progress(what);
    return device::wait_stream(stream, progress);
  }

  // Before a CUDA-aware base MPI reads or writes the buffer: the application's earlier work on it.
  Status wait_for_legacy_stream(const char* what) const {
    MpiProgress progress(what);
    return device::wait_for_legacy_stream(where_.device, progress);
  }

  const PartitionedCall call_;
  const TypeInfo type_;
  const device::PointerInfo where_;
  const bool staged_;  // false: a CUDA-aware base MPI has the device buffer itself
  Span first_;  // partition 0's span, relative to call_.buf
  Span whole_;  // every partition's
  bool keep_holes_ = false;
  device::Buffer image_;
  MPI_Request base_ = MPI_REQUEST_NULL;

  // The round. MPI_Parrived and the completion's polls test and change it under mutex_; MPI_Pready
  // of different partitions may run in several threads at once (MPI allows it) and only counts.
  std::mutex mutex_;
  // Who holds mutex_ in start() or arrived(), which call the base MPI under it: a poll of the round's
  // request from inside such a call (were the base MPI to poll generalized requests there) finds the
  // round busy instead of locking a mutex its own thread holds.
  std::atomic<std::thread::id> holder_{};
  bool in_round_ = false;  // started, its completion not yet polled to the end
  bool base_done_ = false;
  std::atomic<int> readied_{0};
  MPI_Status status_{};
  std::vector<Delivery> delivery_;
  std::vector<std::shared_ptr<device::Event>> copies_;  // of partitions being copied
  std::shared_ptr<device::Event> round_copied_;         // after every copy of the round
};

// The request of one round.
class PartitionedRoundOp final : public AsyncOp {
 public:
  explicit PartitionedRoundOp(std::shared_ptr<PartitionedTransfer> transfer) : transfer_(std::move(transfer)) {}
  Status progress(bool* done) override { return transfer_->advance_round(done); }
  void fill_status(MPI_Status* status) const override { transfer_->fill_status(status); }

 private:
  std::shared_ptr<PartitionedTransfer> transfer_;
};

Status PartitionedTransfer::start(MPI_Request* inner) {
  HeldLock lock(mutex_, holder_);
  if (in_round_) return Status(MPI_ERR_REQUEST, "MPI_Start of a partitioned request that is still active");
  std::fill(delivery_.begin(), delivery_.end(), Delivery::pending);
  for (auto& copy : copies_) copy.reset();
  base_done_ = false;
  readied_.store(0, std::memory_order_relaxed);
  if (staged_ && keep_holes_) {
    MCRP_TRY(run_on_copy_stream("the device bytes between a partitioned receive's elements (MPI_Start)",
                                [&](cudaStream_t stream) {
                                  return device::copy_async(image_.data(), static_cast<char*>(call_.buf) + whole_.lo,
                                                            whole_.bytes(), stream, "cudaMemcpyAsync (device to host)");
                                }));
  } else if (!staged_ && call_.receives) {
    // The base MPI may write the buffer from now on.
    MCRP_TRY(wait_for_legacy_stream("earlier device work before a CUDA-aware base MPI's partitioned receive"));
  }
  profile::StepTimer in_base_mpi(profile::Step::wait);
  MCRP_TRY(from_base(PMPI_Start(&base_)));
  in_base_mpi.stop();
  in_round_ = true;
  return start_generalized(std::make_unique<PartitionedRoundOp>(shared_from_this()), call_.comm, "MPI_Start", {},
                           inner);
}

Status PartitionedTransfer::ready(const PartitionList& list) {
  if (call_.receives) return Status(MPI_ERR_REQUEST, "MPI_Pready on a partitioned receive request");
  if (list.form == PartitionList::Form::range && list.low > list.high) {
    return Status(MPI_ERR_ARG,
                  "partition_low " + std::to_string(list.low) + " above partition_high " + std::to_string(list.high));
  }
  if (list.form == PartitionList::Form::list && (list.length < 0 || (list.length > 0 && list.list == nullptr))) {
    return Status(MPI_ERR_ARG, "a negative length or a null array of partitions");
  }
  for (int i = 0; i < list.length; ++i) MCRP_TRY(check_partition(list.at(i)));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!in_round_) return Status(MPI_ERR_REQUEST, "MPI_Pready on an inactive partitioned request");
  }
  // The base MPI may read a partition as soon as it is ready: the copies (or, unstaged, the
  // application's device work that wrote it) are done first.
  if (list.length > 0 && staged_) {
    MCRP_TRY(run_on_copy_stream("the copies of partitions to host memory (MPI_Pready)", [&](cudaStream_t stream) {
      for (int i = 0; i < list.length; ++i) {
        const int p = list.at(i);
        MCRP_TRY(device::copy_async(image_bytes(p), device_bytes(p), first_.bytes(), stream,
                                    "cudaMemcpyAsync (device to host)"));
      }
      return Status();
    }));
  } else if (list.length > 0) {
    MCRP_TRY(wait_for_legacy_stream("earlier device work before a CUDA-aware base MPI's MPI_Pready"));
  }
  MCRP_TRY(from_base(base_ready(list, base_)));
  readied_.fetch_add(list.length, std::memory_order_acq_rel);
  return {};
}

Status PartitionedTransfer::copy_to_device(int p, cudaStream_t stream) const {
  return device::copy_async(device_bytes(p), image_bytes(p), first_.bytes(), stream,
                            "cudaMemcpyAsync (host to device)");
}

Status PartitionedTransfer::queue_delivery(int p, cudaStream_t stream) {
  MCRP_TRY(copy_to_device(p, stream));
  auto copied = std::make_shared<device::Event>();
  MCRP_TRY(device::record_event(stream, *copied));
  copies_[static_cast<std::size_t>(p)] = std::move(copied);
  delivery_[static_cast<std::size_t>(p)] = Delivery::copying;
  return {};
}

Status PartitionedTransfer::arrived(int partition, int* flag) {
  if (!call_.receives) return Status(MPI_ERR_REQUEST, "MPI_Parrived on a partitioned send request");
  MCRP_TRY(check_partition(partition));
  if (flag == nullptr) return Status(MPI_ERR_ARG, "a null flag");
  *flag = 0;
  const auto p = static_cast<std::size_t>(partition);
  HeldLock lock(mutex_, holder_);
  if (delivery_[p] == Delivery::pending) {
    if (!in_round_) return Status(MPI_ERR_REQUEST, "MPI_Parrived on an inactive partitioned request");
    int arrived = 0;
    {
      profile::StepTimer in_base_mpi(profile::Step::wait);
      MCRP_TRY(from_base(PMPI_Parrived(base_, partition, &arrived)));
    }
    if (!staged_) {  // the base MPI wrote it in the buffer itself
      *flag = arrived;
      return {};
    }
    if (!arrived) return {};
    profile::StepTimer queueing(profile::Step::queue);
    device::DeviceGuard on_device(where_.device);
    cudaStream_t stream = nullptr;
    MCRP_TRY(copy_stream(&stream));
    MCRP_TRY(queue_delivery(partition, stream));
  }
  if (delivery_[p] == Delivery::copying) {
    bool done = false;
    device::DeviceGuard on_device(where_.device);  // the event's device
    MCRP_TRY(device::query_event(copies_[p]->get(), &done));
    if (!done) return {};
    delivery_[p] = Delivery::delivered;
    copies_[p].reset();
  }
  *flag = 1;
  return {};
}

Status PartitionedTransfer::advance_round(bool* done) {
  if (holder_.load(std::memory_order_acquire) == std::this_thread::get_id()) return {};
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return {};  // an MPI_Parrived is at it: the next poll
  if (!base_done_) {
    // A send completes only once every partition is ready; testing earlier would race with the
    // MPI_Pready calls of other threads for nothing.
    if (!call_.receives && readied_.load(std::memory_order_acquire) < call_.partitions) return {};
    int complete = 0;
    const int rc = PMPI_Test(&base_, &complete, &status_);
    if (rc != MPI_SUCCESS) {
      in_round_ = false;
      return already_raised(rc);
    }
    if (!complete) return {};
    base_done_ = true;
    if (call_.receives && staged_) {
      device::DeviceGuard on_device(where_.device);
      cudaStream_t stream = nullptr;
      MCRP_TRY(copy_stream(&stream));
      std::vector<std::size_t> queued;
      for (int p = 0; p < call_.partitions; ++p) {
        if (delivery_[static_cast<std::size_t>(p)] != Delivery::pending) continue;
        MCRP_TRY(copy_to_device(p, stream));
        queued.push_back(static_cast<std::size_t>(p));
      }
      // After the copies MPI_Parrived queued before too: one stream. MPI_Parrived of a partition
      // queued here asks this event (the base MPI's request is inactive now).
      round_copied_ = std::make_shared<device::Event>();
      MCRP_TRY(device::record_event(stream, *round_copied_));
      for (std::size_t p : queued) {
        delivery_[p] = Delivery::copying;
        copies_[p] = round_copied_;
      }
    }
  }
  if (round_copied_) {
    bool copied = false;
    device::DeviceGuard on_device(where_.device);
    MCRP_TRY(device::query_event(round_copied_->get(), &copied));
    if (!copied) return {};
    round_copied_.reset();
  }
  std::fill(delivery_.begin(), delivery_.end(), Delivery::delivered);
  for (auto& copy : copies_) copy.reset();
  in_round_ = false;
  *done = true;
  return {};
}

// Every partition's bytes as one side, when counts, datatype and span are ones the base MPI would
// accept and cover at least one byte; false otherwise (the base MPI reports bad arguments in its own
// words, and never reads a host buffer early).
bool describe_buffer(const PartitionedCall& call, TypeInfo* type, BufferSide* all) {
  if (call.partitions < 1 || call.count < 0) return false;
  if (call.count > 0 && call.count > std::numeric_limits<MPI_Count>::max() / call.partitions) return false;
  if (!type_info(call.type, type).ok()) return false;
  all->base = static_cast<char*>(call.buf);
  all->type = call.type;
  all->blocks = {Block{0, call.count * call.partitions}};
  return check_side(*all, *type).ok() && span_of(*all, *type).bytes() > 0;
}

std::shared_ptr<PartitionedTransfer> transfer_of(MPI_Request request) {
  if (!persistent_requests_exist()) return nullptr;
  return std::dynamic_pointer_cast<PartitionedTransfer>(persistent_attachment(request));
}

// No exception crosses the C ABI; a failure is raised on the request's communicator.
template <class Body>
int run_guarded(MPI_Comm comm, const char* entry, Body&& body) {
  auto fail = [&](const Status& status) { return raise_error(comm, entry, 0, status); };
  return guarded(
      [&] {
        const Status status = body();
        return status.ok() ? MPI_SUCCESS : fail(status);
      },
      fail);
}

}  // namespace

int partitioned_init(const PartitionedCall& call, MPI_Request* request) {
  profile::CallTimer timing(profile::Form::blocking);
  const PartitionedOp op = call.receives ? PartitionedOp::precv_init : PartitionedOp::psend_init;
  profile::StepTimer classifying(profile::Step::classify);
  TypeInfo type;
  BufferSide all;
  device::PointerInfo where;
  // A null request is the base MPI's to report, on the call's communicator. Host buffers are
  // looked at only with a GPU present or under MCRPMPI_VERIFY.
  const bool verify = config().verify;
  const bool sound = request != nullptr && (device::cuda_available() || verify) && describe_buffer(call, &type, &all);
  if (sound) where = device::locate(memory_probe_address(all));
  classifying.stop();
  if (sound && verify) {  // the memory holds every partition (runtime/memory_checks.h)
    const Status held = check_buffer_memory(all, type, where);
    if (!held.ok()) {
      *request = MPI_REQUEST_NULL;
      return raise_error(call.comm, call.entry, 0, held);
    }
  }
  if (!sound || where.kind != device::MemoryKind::device) {
    if (profile::enabled()) charge_profile(op, P2PPath::mpi);
    return base_init(call, request);
  }
  return run_guarded(call.comm, call.entry, [&]() -> Status {
    MCRP_TRY(check_committed(call.type, call.comm));
    auto transfer = std::make_shared<PartitionedTransfer>(call, type, where);
    if (profile::enabled()) charge_profile(op, transfer->path());
    MCRP_TRY(transfer->create());
    PersistentStart start = [transfer, op](MPI_Request* inner) {
      profile::CallTimer timing(profile::Form::started);  // the init call's row, form start
      if (profile::enabled()) charge_profile(op, transfer->path());
      const Status started = transfer->start(inner);
      return started.ok() ? MPI_SUCCESS : raise_error(transfer->comm(), "MPI_Start", 0, started);
    };
    return create_persistent(std::move(start), HandleHolds::of(call.comm, {call.type}), request, FreeActive::detach,
                             transfer);
  });
}

int ready_partitions(const PartitionList& partitions, MPI_Request request) {
  profile::CallTimer timing(profile::Form::blocking);
  const PartitionedOp op = partitions.form == PartitionList::Form::one     ? PartitionedOp::pready
                           : partitions.form == PartitionList::Form::range ? PartitionedOp::pready_range
                                                                           : PartitionedOp::pready_list;
  const std::shared_ptr<PartitionedTransfer> transfer = transfer_of(request);
  if (profile::enabled()) charge_profile(op, transfer ? transfer->path() : P2PPath::mpi);
  if (!transfer) return base_ready(partitions, request);
  return run_guarded(transfer->comm(), mpi_name(op), [&] { return transfer->ready(partitions); });
}

int partition_arrived(MPI_Request request, int partition, int* flag) {
  profile::CallTimer timing(profile::Form::blocking);
  const std::shared_ptr<PartitionedTransfer> transfer = transfer_of(request);
  if (profile::enabled()) charge_profile(PartitionedOp::parrived, transfer ? transfer->path() : P2PPath::mpi);
  if (!transfer) {
    profile::StepTimer in_base_mpi(profile::Step::wait);
    return PMPI_Parrived(request, partition, flag);
  }
  return run_guarded(transfer->comm(), "MPI_Parrived", [&] { return transfer->arrived(partition, flag); });
}

}  // namespace mcrp
