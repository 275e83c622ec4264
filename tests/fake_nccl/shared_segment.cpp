#include "tests/fake_nccl/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace fake_nccl {
namespace {

constexpr std::uint64_t kMagic = 0x6d637270666e636cULL;  // "mcrpfncl"

std::size_t pids_offset() { return (sizeof(SegmentHeader) + 63) / 64 * 64; }
std::size_t ends_offset(int nranks) { return (pids_offset() + sizeof(pid_t) * nranks + 63) / 64 * 64; }
// Two flags per ordered pair of ranks: the sender's end has come, the receiver's end has come.
std::size_t rings_offset(int nranks) {
  return (ends_offset(nranks) + 2 * sizeof(std::atomic<std::uint8_t>) * nranks * nranks + 63) / 64 * 64;
}

}  // namespace

std::size_t Ring::put(const char* from, std::size_t bytes) {
  const std::uint64_t head = written.load(std::memory_order_relaxed);
  const std::uint64_t tail = consumed.load(std::memory_order_acquire);
  const std::size_t room = kRingBytes - static_cast<std::size_t>(head - tail);
  const std::size_t n = std::min(room, bytes);
  const std::size_t at = static_cast<std::size_t>(head % kRingBytes);
  const std::size_t first = std::min(n, kRingBytes - at);
  std::memcpy(data + at, from, first);
  std::memcpy(data, from + first, n - first);
  written.store(head + n, std::memory_order_release);
  return n;
}

std::size_t Ring::take(char* to, std::size_t bytes) {
  const std::uint64_t tail = consumed.load(std::memory_order_relaxed);
  const std::uint64_t head = written.load(std::memory_order_acquire);
  const std::size_t n = std::min(static_cast<std::size_t>(head - tail), bytes);
  const std::size_t at = static_cast<std::size_t>(tail % kRingBytes);
  const std::size_t first = std::min(n, kRingBytes - at);
  std::memcpy(to, data + at, first);
  std::memcpy(to + first, data, n - first);
  consumed.store(tail + n, std::memory_order_release);
  return n;
}

bool Segment::open(const std::string& name, int nranks, int rank, std::string* error) {
  name_ = name;
  nranks_ = nranks;
  bytes_ = rings_offset(nranks) + sizeof(Ring) * static_cast<std::size_t>(nranks) * nranks;
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    *error = "shm_open " + name + ": " + std::strerror(errno);
    return false;
  }
  // Every rank sizes it alike; a fresh object reads as zeros, which is every ring's empty state.
  if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
    *error = "ftruncate " + name + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    *error = "mmap " + name + ": " + std::strerror(errno);
    return false;
  }
  auto* header = static_cast<SegmentHeader*>(base_);
  if (header->magic == 0) {
    // Several ranks may store the same values: harmless.
    header->nranks = nranks;
    header->magic = kMagic;
  }
  reinterpret_cast<pid_t*>(static_cast<char*>(base_) + pids_offset())[rank] = getpid();
  header->arrived_count.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

Segment::~Segment() {
  unlink_name();
  if (base_ != nullptr) munmap(base_, bytes_);
}

bool Segment::everyone_arrived() const {
  return static_cast<SegmentHeader*>(base_)->arrived_count.load(std::memory_order_acquire) >= nranks_;
}

pid_t Segment::pid_of(int rank) const {
  return reinterpret_cast<const pid_t*>(static_cast<const char*>(base_) + pids_offset())[rank];
}

Ring& Segment::ring(int from, int to) const {
  auto* rings = reinterpret_cast<Ring*>(static_cast<char*>(base_) + rings_offset(nranks_));
  return rings[static_cast<std::size_t>(from) * nranks_ + to];
}

void Segment::come_to_connection(int from, int to, bool as_sender) const {
  auto* ends = reinterpret_cast<std::atomic<std::uint8_t>*>(static_cast<char*>(base_) + ends_offset(nranks_));
  ends[2 * (static_cast<std::size_t>(from) * nranks_ + to) + (as_sender ? 0 : 1)].store(1, std::memory_order_release);
}

bool Segment::connection_open(int from, int to) const {
  auto* ends = reinterpret_cast<std::atomic<std::uint8_t>*>(static_cast<char*>(base_) + ends_offset(nranks_));
  const std::size_t pair = 2 * (static_cast<std::size_t>(from) * nranks_ + to);
  return ends[pair].load(std::memory_order_acquire) != 0 && ends[pair + 1].load(std::memory_order_acquire) != 0;
}

void Segment::unlink_name() {
  if (unlinked_ || base_ == nullptr) return;
  unlinked_ = true;
  shm_unlink(name_.c_str());  // ENOENT when another rank was first: fine
}

}  // namespace fake_nccl
