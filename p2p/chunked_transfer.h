// One payload of the base-MPI channel (p2p/channel.h) staged through pinned host memory, for a base
// MPI that cannot take device pointers. Cut into chunks (runtime/chunk_plan.h, the tuning table's
// staged_chunk_bytes: alike on every rank, and both ends of a transfer know its size, so both cut
// it the same way), pipelined: a send copies every chunk to the host on the copy stream and hands
// each to the base MPI as its copy completes; a receive posts every chunk's receive at once and
// copies each to the device (on the copy-back stream) as it lands. Chunks are synchronous sends
// (MPI_Issend) of one tag between the pair, so the base MPI's non-overtaking matches them in order
// and a transfer completes only once its peer has launched it, as an NCCL transfer would.
#pragma once
#include <mpi.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "device/buffer_pool.h"
#include "device/handles.h"
#include "device/status.h"
#include "p2p/channel.h"
#include "runtime/chunk_plan.h"

namespace mcrp {

class ChunkedTransfer {
 public:
  // Starts the copies to the host (send) or posts the receives (receive) on `comm`.
  Status start(const ChannelTransfer& transfer, MPI_Comm comm, std::uint64_t chunk_setting);
  // Moves what is ready on; *done once the data is at the peer (send) or on the device (receive).
  // Every chunk between two ranks travels with one tag, so the receiver matches them in the order
  // they reach the base MPI: a send hands chunks over only once `earlier_sends_handed_over`, i.e.
  // every send transfer before it in the group has handed over all of its own.
  Status advance(MPI_Comm comm, bool earlier_sends_handed_over, bool* done);
  // A send whose chunks have all reached the base MPI (always true of a receive).
  bool handed_over() const { return !transfer_.send || moved_ == messages_; }

 private:
  Status advance_send(MPI_Comm comm, bool may_hand_over, bool* done);
  Status advance_receive(bool* done);

  ChannelTransfer transfer_;
  ChunkPlan plan_;
  int messages_ = 0;  // the plan's chunks, at least one: an empty transfer still meets its peer
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  device::Buffer host_;
  std::vector<device::Event> copied_;  // chunk k's copy (to the host, or to the device) is done
  std::vector<MPI_Request> requests_;
  int moved_ = 0;  // send: chunks handed to the base MPI; receive: chunks whose copy to the device is queued
};

}  // namespace mcrp
