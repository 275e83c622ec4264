// The memory the ranks of one fake NCCL communicator share: a POSIX shared-memory object named by
// the communicator's unique id, holding who has arrived (and their process ids, to notice a peer
// that died) and one single-producer, single-consumer byte ring per ordered pair of ranks. All
// ranks of a fake communicator therefore run on one host, which is what CPU CI has.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace fake_nccl {

constexpr std::size_t kRingBytes = 1024 * 1024;  // few hand-offs for a large message on a busy CPU

// Bytes flow from one rank to another through this ring in the order they were written.
struct alignas(64) Ring {
  std::atomic<std::uint64_t> written{0};  // advanced by the producer only
  char pad_written[56];
  std::atomic<std::uint64_t> consumed{0};  // advanced by the consumer only
  char pad_consumed[56];
  char data[kRingBytes];

  // Copies as much of [from, from + bytes) in as fits; returns how much.
  std::size_t put(const char* from, std::size_t bytes);
  // Copies as much as has arrived, up to `bytes`, to `to`; returns how much.
  std::size_t take(char* to, std::size_t bytes);
};

struct SegmentHeader {
  std::uint64_t magic;
  int nranks;
  std::atomic<int> arrived_count;
  // Followed by nranks pids (0 until that rank arrived), then nranks * nranks rings.
};

class Segment {
 public:
  // Opens (creating if needed) the segment called `name` for `nranks` ranks and records this rank.
  // False with *error set when it cannot.
  bool open(const std::string& name, int nranks, int rank, std::string* error);
  ~Segment();

  bool everyone_arrived() const;
  pid_t pid_of(int rank) const;
  Ring& ring(int from, int to) const;
  // Point-to-point connections (a blocking communicator's, fake_comm.h): each end of the pair
  // `from` -> `to` says it has come; the connection is open once both have.
  void come_to_connection(int from, int to, bool as_sender) const;
  bool connection_open(int from, int to) const;
  // Removes the name once every rank has mapped it (the mapping stays valid).
  void unlink_name();

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  int nranks_ = 0;
  std::string name_;
  bool unlinked_ = false;
};

}  // namespace fake_nccl
