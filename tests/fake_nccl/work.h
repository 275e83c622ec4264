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
  }
  bool empty() const { return sends.empty() && receives.empty() && finishes.empty(); }
};

}  // namespace fake_nccl
