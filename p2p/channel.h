// How the device-only point-to-point protocol moves payloads once MPI has matched them: groups of
// transfers with peers, launched one group at a time per rank and completing together, the way
// NCCL's grouped ncclSend/ncclRecv behave (calls of one group progress independently; a group
// blocks the communicator's stream until all of them are done, so a rank must never have two
// groups in flight: see the epoch protocol in p2p/engine.h).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "device/status.h"
#include "runtime/nccl_transfers.h"

namespace mcrp {

using ChannelTransfer = NcclTransfer;

class Channel {
 public:
  virtual ~Channel() = default;
  // Starts one group; the previous one has completed.
  virtual Status launch(const std::vector<ChannelTransfer>& group) = 0;
  // Whether the group launched last has completed (never blocks).
  virtual Status test(bool* done) = 0;
  virtual const char* name() const = 0;
  virtual int device() const = 0;  // where the transfers' memory must be (-1: anywhere MPI reaches)
};

// NCCL send/recv on an NCCL communicator of its own (made on `comm`, a private duplicate, collectively,
// when the user's communicator is asserted device-only), so that point-to-point never queues behind
// or in front of the collectives' NCCL work.
std::unique_ptr<Channel> make_nccl_channel(MPI_Comm comm, int device);

// The base MPI on `comm` (a private duplicate): synchronous sends and receives, so a transfer
// completes only once both sides have launched it, as with NCCL. Device pointers go to a base MPI
// that takes them; any other gets the payloads staged through pinned host memory in pipelined
// chunks (p2p/chunked_transfer.h). For NCCL-less set-ups and for tests on the fake device.
std::unique_ptr<Channel> make_mpi_channel(MPI_Comm comm);

}  // namespace mcrp
