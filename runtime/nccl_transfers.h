// One point-to-point transfer of a group of ncclSend/ncclRecv: what the device-only point-to-point
// channel (p2p/channel_nccl.cpp) and the NCCL path's vector collectives (collectives/nccl_path.cpp)
// hand to NcclComm::issue_transfers.
#pragma once
#include <cstddef>

namespace mcrp {

struct NcclTransfer {
  int peer = 0;          // rank in the communicator
  bool send = false;     // else receive
  void* data = nullptr;  // device memory on the communicator's device (the fake device: host memory)
  std::size_t bytes = 0;
};

}  // namespace mcrp
