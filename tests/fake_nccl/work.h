// What one NCCL call (or one group of them) asks of a fake communicator: byte streams to and from
// peers, then local steps (reductions, a rank's own block) once every stream is complete. Streams to
// one peer are delivered in the order they are listed, and both sides list them in the same order
// (NCCL's rule that ranks issue the same calls in the same order), so no framing is needed.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace fake_nccl {

struct Stream {
  int peer;
  char* data;
  std::size_t bytes;
  std::size_t done = 0;
};

struct Work {
  std::vector<Stream> sends;
  std::vector<Stream> receives;
  std::vector<std::function<void()>> finishes;  // run in order after every stream has completed
  // The point-to-point connections this work uses, by peer and direction (ncclSend, ncclRecv, and
  // the AlltoAll, Gather and Scatter NCCL builds on them): a blocking communicator opens the new
  // ones at launch (fake_comm.h).
  std::vector<int> opens_to, opens_from;

  void send(int peer, const void* data, std::size_t bytes) {
    if (bytes > 0) sends.push_back({peer, static_cast<char*>(const_cast<void*>(data)), bytes});
  }
  void receive(int peer, void* data, std::size_t bytes) {
    if (bytes > 0) receives.push_back({peer, static_cast<char*>(data), bytes});
  }
  void append(Work&& other) {
    for (Stream& s : other.sends) sends.push_back(s);
    for (Stream& s : other.receives) receives.push_back(s);
    for (auto& f : other.finishes) finishes.push_back(std::move(f));
    opens_to.insert(opens_to.end(), other.opens_to.begin(), other.opens_to.end());
    opens_from.insert(opens_from.end(), other.opens_from.begin(), other.opens_from.end());
  }
  // Every stream's peer as a connection (AlltoAll, Gather, Scatter).
  void opens_streams() {
    for (const Stream& s : sends) opens_to.push_back(s.peer);
    for (const Stream& s : receives) opens_from.push_back(s.peer);
  }
  bool empty() const { return sends.empty() && receives.empty() && finishes.empty(); }
};

}  // namespace fake_nccl
