#include "tests/mpi/mixed_calls.h"

#include <string>
#include <vector>

namespace mcrp_test {
namespace {

constexpr int kPersistentCount = 32;

// rank r contributes r + 1 + j at element j: the sum over ranks is size(size+1)/2 + size*j.
std::vector<int> contribution(int rank, int count) {
  std::vector<int> values(static_cast<std::size_t>(count));
  for (int j = 0; j < count; ++j) values[j] = rank + 1 + j;
  return values;
}

std::vector<int> sum_over_ranks(int size, int count) {
  std::vector<int> values(static_cast<std::size_t>(count));
  for (int j = 0; j < count; ++j) values[j] = size * (size + 1) / 2 + size * j;
  return values;
}

int small_count(int round) { return 1 + (round * 7) % 64; }

}  // namespace

MixedCalls::MixedCalls(Checker& checker, MemorySpace& device, MPI_Comm comm, int large)
    : checker_(checker), device_(device), comm_(comm), large_(large) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const std::size_t elements = static_cast<std::size_t>(large_ < 1024 ? 1024 : large_);
  device_send_ = static_cast<int*>(device_.allocate(elements * sizeof(int)));
  device_recv_ = static_cast<int*>(device_.allocate(elements * sizeof(int)));
  persistent_send_ = static_cast<int*>(device_.allocate(kPersistentCount * sizeof(int)));
  persistent_recv_ = static_cast<int*>(device_.allocate(kPersistentCount * sizeof(int)));
  const std::vector<int> mine = contribution(rank_, kPersistentCount);
  device_.upload(persistent_send_, mine.data(), mine.size() * sizeof(int));
  MPI_Allreduce_init(persistent_send_, persistent_recv_, kPersistentCount, MPI_INT, MPI_SUM, comm_, MPI_INFO_NULL,
                     &persistent_);
}

MixedCalls::~MixedCalls() {
  if (persistent_ != MPI_REQUEST_NULL) MPI_Request_free(&persistent_);
  device_.release(device_send_);
  device_.release(device_recv_);
  device_.release(persistent_send_);
  device_.release(persistent_recv_);
}

int MixedCalls::step(const char* name, int (MixedCalls::*part)(int), int round) {
  if (step_ != nullptr) step_->store(name, std::memory_order_relaxed);
  return (this->*part)(round);
}

int MixedCalls::run_round(int round) {
  int calls = step("allreduce_pair", &MixedCalls::allreduce_pair, round);
  calls += step("nonblocking_pair", &MixedCalls::nonblocking_pair, round);
  calls += step("persistent_round", &MixedCalls::persistent_round, round);
  calls += step("bcast_round", &MixedCalls::bcast_round, round);
  calls += step("ring_round", &MixedCalls::ring_round, round);
  if (round % 4 == 0) calls += step("alltoallw_round", &MixedCalls::alltoallw_round, round);
  if (round % 16 == 0) calls += step("large_round", &MixedCalls::large_round, round);
  if (round % 64 == 0) calls += step("dup_round", &MixedCalls::dup_round, round);
  if (step_ != nullptr) step_->store(nullptr, std::memory_order_relaxed);
  return calls;
}

int MixedCalls::allreduce_pair(int round) {
  const int n = small_count(round);
  const std::vector<int> mine = contribution(rank_, n), want = sum_over_ranks(size_, n);
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  int rc = MPI_Allreduce(device_send_, device_recv_, n, MPI_INT, MPI_SUM, comm_);
  std::vector<int> got(static_cast<std::size_t>(n));
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("allreduce on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  std::vector<int> host_got(static_cast<std::size_t>(n));
  rc = MPI_Allreduce(mine.data(), host_got.data(), n, MPI_INT, MPI_SUM, comm_);
  checker_.expect_equal("allreduce on host", rc, host_got.data(), want.data(), want.size());
  return 2;
}

int MixedCalls::nonblocking_pair(int round) {
  const int n = small_count(round + 1);
  const int root = round % size_;
  const std::vector<int> mine = contribution(rank_, n), want = sum_over_ranks(size_, n);
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  std::vector<int> broadcast(static_cast<std::size_t>(n), rank_ == root ? round : -1);
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  // A start that fails leaves no request to wait for: its own code is the call's outcome (on
  // 2026-11-30 a failed start read as wrong data, its null request "completing" in the Waitall).
  const int started[2] = {MPI_Iallreduce(device_send_, device_recv_, n, MPI_INT, MPI_SUM, comm_, &requests[0]),
                          MPI_Ibcast(broadcast.data(), n, MPI_INT, root, comm_, &requests[1])};
  for (int i = 0; i < 2; ++i) {
    if (started[i] != MPI_SUCCESS) requests[i] = MPI_REQUEST_NULL;
  }
  const int waited = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  const int rc_allreduce = started[0] != MPI_SUCCESS ? started[0] : waited;
  const int rc_bcast = started[1] != MPI_SUCCESS ? started[1] : waited;
  std::vector<int> got(static_cast<std::size_t>(n));
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("iallreduce on " + std::string(device_.name()), rc_allreduce, got.data(), want.data(),
                        want.size());
  const std::vector<int> want_broadcast(static_cast<std::size_t>(n), round);
  checker_.expect_equal("ibcast on host", rc_bcast, broadcast.data(), want_broadcast.data(), want_broadcast.size());
  return 3;
}

int MixedCalls::persistent_round(int) {
  int rc = MPI_Start(&persistent_);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&persistent_, MPI_STATUS_IGNORE);
  std::vector<int> got(kPersistentCount);
  device_.download(got.data(), persistent_recv_, got.size() * sizeof(int));
  const std::vector<int> want = sum_over_ranks(size_, kPersistentCount);
  checker_.expect_equal("persistent allreduce", rc, got.data(), want.data(), want.size());
  return 2;
}

int MixedCalls::bcast_round(int round) {
  constexpr int n = 1024;
  const int root = (round + 1) % size_;
  std::vector<int> values(n);
  for (int j = 0; j < n; ++j) values[j] = rank_ == root ? round + j : -1;
  device_.upload(device_recv_, values.data(), values.size() * sizeof(int));
  const int rc = MPI_Bcast(device_recv_, n, MPI_INT, root, comm_);
  std::vector<int> got(n), want(n);
  for (int j = 0; j < n; ++j) want[j] = round + j;
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("bcast on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  return 1;
}

int MixedCalls::ring_round(int round) {
  constexpr int n = 256;
  const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
  std::vector<int> mine(n), want(n);
  for (int j = 0; j < n; ++j) {
    mine[j] = rank_ * 1000 + j + round;
    want[j] = previous * 1000 + j + round;
  }
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  const int rc = MPI_Sendrecv(device_send_, n, MPI_INT, next, 7, device_recv_, n, MPI_INT, previous, 7, comm_,
                              MPI_STATUS_IGNORE);
  std::vector<int> got(n);
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("sendrecv ring on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  return 1;
}

int MixedCalls::large_round(int) {
  const std::vector<int> mine = contribution(rank_, large_), want = sum_over_ranks(size_, large_);
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  const int rc = MPI_Allreduce(device_send_, device_recv_, large_, MPI_INT, MPI_SUM, comm_);
  std::vector<int> got(static_cast<std::size_t>(large_));
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("large allreduce on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  return 1;
}

// One int to every rank through MPI_Alltoallw, then packed into host memory and unpacked back into
// the space: the staged paths of the block collectives and the local calls.
int MixedCalls::alltoallw_round(int round) {
  const auto ranks = static_cast<std::size_t>(size_);
  std::vector<int> mine(ranks), want(ranks), ones(ranks, 1), displs(ranks);
  const std::vector<MPI_Datatype> ints(ranks, MPI_INT);
  for (int r = 0; r < size_; ++r) {
    mine[r] = rank_ * 1000 + r + round;
    want[r] = r * 1000 + rank_ + round;
    displs[r] = r * static_cast<int>(sizeof(int));
  }
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  int rc = MPI_Alltoallw(device_send_, ones.data(), displs.data(), ints.data(), device_recv_, ones.data(),
                         displs.data(), ints.data(), comm_);
  std::vector<int> got(ranks);
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("alltoallw on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  int packed_bytes = 0;
  MPI_Pack_size(size_, MPI_INT, comm_, &packed_bytes);
  std::vector<char> packed(static_cast<std::size_t>(packed_bytes));
  int position = 0;
  rc = MPI_Pack(device_recv_, size_, MPI_INT, packed.data(), packed_bytes, &position, comm_);
  position = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Unpack(packed.data(), packed_bytes, &position, device_send_, size_, MPI_INT, comm_);
  device_.download(got.data(), device_send_, got.size() * sizeof(int));
  checker_.expect_equal("pack and unpack on " + std::string(device_.name()), rc, got.data(), want.data(), want.size());
  return 4;
}

int MixedCalls::dup_round(int round) {
  MPI_Comm dup = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(comm_, &dup);
  checker_.check(rc == MPI_SUCCESS, "comm_dup");
  if (rc != MPI_SUCCESS) return 1;
  const int n = small_count(round + 2);
  const std::vector<int> mine = contribution(rank_, n), want = sum_over_ranks(size_, n);
  device_.upload(device_send_, mine.data(), mine.size() * sizeof(int));
  rc = MPI_Allreduce(device_send_, device_recv_, n, MPI_INT, MPI_SUM, dup);
  std::vector<int> got(static_cast<std::size_t>(n));
  device_.download(got.data(), device_recv_, got.size() * sizeof(int));
  checker_.expect_equal("allreduce on a fresh duplicate", rc, got.data(), want.data(), want.size());
  checker_.check(MPI_Comm_free(&dup) == MPI_SUCCESS, "comm_free");
  return 3;
}

}  // namespace mcrp_test
