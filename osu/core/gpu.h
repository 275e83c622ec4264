// The little of CUDA the benchmarks need: is there a device, pick one per rank on a node, and an
// owning buffer that lives on the host or on that device with a host mirror for fill and check.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>

#include "osu/core/options.h"

namespace osu {

// Number of CUDA devices this process sees; 0 when there is no driver or no device.
int cuda_device_count();

// The rank's index among the ranks of its node (MPI_COMM_TYPE_SHARED), and how many those are.
struct NodePlace {
  int rank;
  int ranks;
};
NodePlace node_place(MPI_Comm comm);

// Selects device (local rank modulo device count) when memory is cuda. Collective over comm: returns
// false on every rank, after rank 0 printed why, when some rank has no device (or, for fake, when
// libmcrpmpi's fake device is not on).
bool select_device(Memory memory, MPI_Comm comm);

// A benchmark buffer. data() is what MPI is handed (host, device or fake device pointer); host() is a host view
// of the same bytes, made current by pull() and pushed to the device by push() (no-ops on host).
class Buffer {
 public:
  Buffer(Memory memory, std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  void* host() { return host_.get(); }
  void push(std::size_t bytes);
  void pull(std::size_t bytes);

 private:
  Memory memory_;
  std::unique_ptr<unsigned char[]> host_;
  void* data_ = nullptr;
};

}  // namespace osu
