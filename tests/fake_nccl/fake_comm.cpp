#include "tests/fake_nccl/fake_comm.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>

#include "tests/fake_nccl/device_model.h"

namespace fake_nccl {
namespace {

// Rounds without progress before the worker yields, then sleeps, then looks for dead peers.
constexpr unsigned kSpinRounds = 64;
constexpr unsigned kYieldRounds = 16384;
constexpr unsigned kPeerCheckRounds = 4096;  // checked at every 4096th idle round (some ms)

bool all_done(const std::vector<Stream>& streams) {
  for (const Stream& s : streams) {
    if (s.done < s.bytes) return false;
  }
  return true;
}

}  // namespace

bool late_kernels() {
  static const bool on = [] {
    const char* value = std::getenv("MCRPMPI_FAKE_NCCL_LATE");
    return value == nullptr || value[0] != '0';
  }();
  return on;
}

Comm::Comm(int nranks, int rank, bool blocking)
    : nranks(nranks),
      rank(rank),
      blocking(blocking),
      sends_open_(static_cast<std::size_t>(nranks), 0),
      receives_open_(static_cast<std::size_t>(nranks), 0) {
  device_model::add(this);
}

Comm::~Comm() {
  device_model::remove(this);
  stop();
}

bool Comm::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_ || failure_.load() != ncclSuccess || completed_ >= submitted_;
}

std::uint64_t Comm::submitted() {
  std::lock_guard<std::mutex> lock(mutex_);
  return submitted_;
}

bool Comm::done_through(std::uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopping_ || revoked_ || completed_ >= ticket;
}

void Comm::revoke() {
  fail(ncclInvalidUsage, "fake NCCL: communicator revoked");
  std::lock_guard<std::mutex> lock(mutex_);
  revoked_ = true;
}

bool Comm::start(const std::string& name) {
  std::string why;
  if (!segment_.open(name, nranks, rank, &why)) {
    fail(ncclSystemError, why);
    return false;
  }
  worker_ = std::thread([this] { run(); });
  return true;
}

ncclResult_t Comm::connect(const Work& work) {
  std::vector<std::pair<int, int>> opening;  // (from, to)
  for (int peer : work.opens_to) {
    if (peer == rank || sends_open_[static_cast<std::size_t>(peer)]) continue;
    segment_.come_to_connection(rank, peer, true);
    opening.emplace_back(rank, peer);
  }
  for (int peer : work.opens_from) {
    if (peer == rank || receives_open_[static_cast<std::size_t>(peer)]) continue;
    segment_.come_to_connection(peer, rank, false);
    opening.emplace_back(peer, rank);
  }
  unsigned idle = 0;
  for (const auto& pair : opening) {
    while (!segment_.connection_open(pair.first, pair.second)) {
      if (stalled(&idle)) continue;
      const ncclResult_t failed = failure_.load();
      return failed != ncclSuccess ? failed : ncclInvalidUsage;  // stopped
    }
    (pair.first == rank ? sends_open_[static_cast<std::size_t>(pair.second)]
                        : receives_open_[static_cast<std::size_t>(pair.first)]) = 1;
  }
  return ncclSuccess;
}

ncclResult_t Comm::submit(Work work) {
  if (blocking) {
    const ncclResult_t connected = connect(work);
    if (connected != ncclSuccess) return connected;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  const ncclResult_t failed = failure_.load();
  if (failed != ncclSuccess) return failed;
  const std::uint64_t ticket = ++submitted_;
  queue_.push_back(std::move(work));
  changed_.notify_all();
  if (late_kernels()) return ncclSuccess;  // queued: the "kernel" runs later
  if (!blocking) return ncclInProgress;
  changed_.wait(lock, [&] { return completed_ >= ticket || failure_.load() != ncclSuccess || stopping_; });
  return failure_.load();
}

ncclResult_t Comm::state() {
  const ncclResult_t failed = failure_.load();
  if (failed != ncclSuccess) return failed;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!segment_.everyone_arrived()) return ncclInProgress;
  // Late kernels: queued work is not "in progress" for the launch, only for a finalize (a flush).
  if (completed_ < submitted_ && (!late_kernels() || !finalize_reported_)) return ncclInProgress;
  if (!finalize_reported_) {
    finalize_reported_ = true;
    return ncclInProgress;
  }
  return ncclSuccess;
}

ncclResult_t Comm::finalize() {
  if (!blocking) {
    std::lock_guard<std::mutex> lock(mutex_);
    finalize_reported_ = false;
    return ncclInProgress;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return completed_ >= submitted_ || failure_.load() != ncclSuccess || stopping_; });
  return failure_.load();
}

void Comm::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

void Comm::fail(ncclResult_t result, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.load() != ncclSuccess) return;
  error_ = why;
  failure_.store(result);
  queue_.clear();
  changed_.notify_all();
}

std::string Comm::last_error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void Comm::run() {
  if (!wait_for_peers()) return;
  for (;;) {
    Work work;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!execute(work)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ++completed_;
    changed_.notify_all();
  }
}

bool Comm::wait_for_peers() {
  unsigned idle = 0;
  while (!segment_.everyone_arrived()) {
    if (!stalled(&idle)) return false;
  }
  if (rank == 0) segment_.unlink_name();  // everyone has it mapped
  return true;
}

bool Comm::execute(Work& work) {
  unsigned idle = 0;
  while (!all_done(work.sends) || !all_done(work.receives)) {
    bool moved = false;
    // Each peer's streams go in list order: only the first unfinished one per peer may move.
    std::vector<char> send_blocked(static_cast<std::size_t>(nranks), 0), receive_blocked(send_blocked);
    for (Stream& s : work.sends) {
      if (s.done == s.bytes || send_blocked[s.peer]) continue;
      const std::size_t n = segment_.ring(rank, s.peer).put(s.data + s.done, s.bytes - s.done);
      s.done += n;
      moved |= n > 0;
      if (s.done < s.bytes) send_blocked[s.peer] = 1;
    }
    for (Stream& r : work.receives) {
      if (r.done == r.bytes || receive_blocked[r.peer]) continue;
      const std::size_t n = segment_.ring(r.peer, rank).take(r.data + r.done, r.bytes - r.done);
      r.done += n;
      moved |= n > 0;
      if (r.done < r.bytes) receive_blocked[r.peer] = 1;
    }
    if (moved) {
      idle = 0;
    } else if (!stalled(&idle)) {
      return false;
    }
  }
  for (auto& finish : work.finishes) finish();
  return true;
}

bool Comm::stalled(unsigned* idle_rounds) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || failure_.load() != ncclSuccess) return false;
  }
  const unsigned idle = ++*idle_rounds;
  if (idle % kPeerCheckRounds == 0 && a_peer_died()) return false;
  if (idle < kSpinRounds) return true;
  if (idle < kYieldRounds) {
    sched_yield();
  } else {
    usleep(50);
  }
  return true;
}

bool Comm::a_peer_died() {
  for (int peer = 0; peer < nranks; ++peer) {
    const pid_t pid = segment_.pid_of(peer);
    if (peer == rank || pid == 0) continue;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
      fail(ncclRemoteError, "fake NCCL: rank " + std::to_string(peer) + " (pid " + std::to_string(pid) + ") has exited");
      return true;
    }
  }
  return false;
}

}  // namespace fake_nccl
