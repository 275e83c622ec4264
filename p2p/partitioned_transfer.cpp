#include "p2p/partitioned_transfer.h"

#include <algorithm>
#include <utility>

#include "runtime/base_mpi.h"
#include "runtime/errors.h"
#include "runtime/requests.h"

namespace mcrp {
namespace {

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

// The request of one round.
class PartitionedRoundOp final : public AsyncOp {
 public:
  explicit PartitionedRoundOp(std::shared_ptr<PartitionedTransfer> transfer) : transfer_(std::move(transfer)) {}
  Status progress(bool* done) override { return transfer_->advance_round(done); }
  void fill_status(MPI_Status* status) const override { transfer_->fill_status(status); }

 private:
  std::shared_ptr<PartitionedTransfer> transfer_;
};

}  // namespace

// The base MPI's MPI_Precv_init or MPI_Psend_init of `c` (buffer included).
int base_partitioned_init(const PartitionedCall& c, MPI_Request* request) {
  profile::StepTimer in_base_mpi(profile::Step::wait);
  return c.receives ? PMPI_Precv_init(c.buf, c.partitions, c.count, c.type, c.peer, c.tag, c.comm, c.info, request)
                    : PMPI_Psend_init(c.buf, c.partitions, c.count, c.type, c.peer, c.tag, c.comm, c.info, request);
}

// The base MPI's MPI_Pready form that names `list`.
int base_pready(const PartitionList& list, MPI_Request request) {
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

PartitionedTransfer::PartitionedTransfer(const PartitionedCall& call, const TypeInfo& type, device::PointerInfo where)
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

PartitionedTransfer::~PartitionedTransfer() {
  if (base_ != MPI_REQUEST_NULL) PMPI_Request_free(&base_);
}

Status PartitionedTransfer::create() {
  if (!staged_) return from_base(base_partitioned_init(call_, &base_));
  {
    profile::StepTimer staging(profile::Step::queue);  // as the other staged paths' images are
    MCRP_TRY(device::acquire(device::BufferKind::pinned_host, -1, whole_.bytes(), image_));
  }
  PartitionedCall on_image = call_;
  on_image.buf = span_base(image_.data(), whole_.lo);
  return from_base(base_partitioned_init(on_image, &base_));
}

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
  MCRP_TRY(from_base(base_pready(list, base_)));
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

}  // namespace mcrp
