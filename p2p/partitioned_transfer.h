// One partitioned request on device memory (p2p/partitioned.h says what the library does with it):
// the base MPI's request on a pinned host image of the buffer, or on the buffer itself for a
// CUDA-aware base MPI, and the partitions' progress in the round under way.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/buffer_pool.h"
#include "device/cuda_runtime.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "device/wait.h"
#include "p2p/partitioned.h"
#include "p2p/profile_rows.h"
#include "runtime/buffer.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"
#include "runtime/progress.h"

namespace mcrp {

// The base MPI's MPI_Precv_init or MPI_Psend_init of `c` (buffer included).
int base_partitioned_init(const PartitionedCall& c, MPI_Request* request);
// The base MPI's MPI_Pready form that names `list`.
int base_pready(const PartitionList& list, MPI_Request request);

// One partitioned request on device memory: the base MPI's request on the host image (on the device
// buffer itself for a CUDA-aware base MPI, staged_ false), and the partitions' progress in the round
// under way. Made only for buffers with bytes to move (partitioned_init).
class PartitionedTransfer final : public PersistentAttachment,
                                  public std::enable_shared_from_this<PartitionedTransfer> {
 public:
  PartitionedTransfer(const PartitionedCall& call, const TypeInfo& type, device::PointerInfo where);
  ~PartitionedTransfer() override;
  PartitionedTransfer(const PartitionedTransfer&) = delete;
  PartitionedTransfer& operator=(const PartitionedTransfer&) = delete;

  // The image and the base MPI's request on it (staged), or the base MPI's request on the buffer.
  Status create();

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
  // Where a receive partition stands in the current round.
  enum class Delivery : unsigned char {
    pending,    // not known to have arrived
    copying,    // arrived; its copy to the device is queued (its event says when it is done)
    delivered,  // on the device
  };

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
  Span first_;         // partition 0's span, relative to call_.buf
  Span whole_;         // every partition's
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

}  // namespace mcrp
