// Why these patterns matter on device buffers: a library that launched the NCCL kernels of one rank
// in one fixed order (one stream for all communicators, or each launch deferred until the previous
// call finished) would deadlock here. In "even A then B, odd B then A", an even rank's GPU would run
// A's kernel, which waits inside NCCL for the odd ranks' A kernel; on the odd ranks that kernel sits
// queued behind their B kernel, which waits for the even rank's B kernel, queued behind its A: a
// cycle. "One rank completes B before starting A" hangs the same way if B's launch waits for A's.
// Guarantee 2 (a stream and a launch queue per communicator, completion by event) keeps them apart,
// so every pattern below must complete within the test's timeout and give the right sums.
#include "tests/mpi/cross_comm_order.h"

#include <memory>
#include <string>
#include <vector>

namespace mcrp_test {
namespace {

// One Iallreduce (float sum) on one communicator, with its buffers and reference.
class Reduction {
 public:
  Reduction(MemorySpace& space, MPI_Comm comm, int id, int world_rank, int world_size, int n, bool in_place)
      : comm_(comm), id_(id), n_(n), in_place_(in_place), send_(space, mine(world_rank, id, n)),
        recv_(space, std::vector<float>(n, -1.0f)), expected_(n, 0.0f) {
    if (in_place_) recv_.upload(mine(world_rank, id, n));
    for (int q = 0; q < world_size; ++q) {
      const std::vector<float> theirs = mine(q, id, n);
      for (int i = 0; i < n; ++i) expected_[i] += theirs[i];
    }
  }

  int start() {
    return MPI_Iallreduce(in_place_ ? MPI_IN_PLACE : send_.data(), recv_.data(), n_, MPI_FLOAT, MPI_SUM, comm_,
                          &request_);
  }
  int run_blocking() {
    return MPI_Allreduce(in_place_ ? MPI_IN_PLACE : send_.data(), recv_.data(), n_, MPI_FLOAT, MPI_SUM, comm_);
  }
  MPI_Request& request() { return request_; }

  void verify(Checker& checker, const std::string& pattern) const {
    const std::vector<float> got = recv_.download();
    checker.check(request_ == MPI_REQUEST_NULL, pattern + ": request of comm " + std::to_string(id_) + " freed");
    checker.expect_equal(pattern + ": sum on comm " + std::to_string(id_), MPI_SUCCESS, got.data(),
                         expected_.data(), expected_.size());
  }

 private:
  // Small integers: float sums are exact in any order.
  static std::vector<float> mine(int rank, int id, int n) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = static_cast<float>((rank + 1) * (id + 1) + i % 7);
    return v;
  }

  MPI_Comm comm_;
  int id_;
  int n_;
  bool in_place_;
  SpaceBuffer<float> send_;
  SpaceBuffer<float> recv_;
  std::vector<float> expected_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

struct Comms {
  MPI_Comm c[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  explicit Comms(MPI_Comm world) {
    int rank = 0, size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    MPI_Comm_dup(world, &c[0]);
    MPI_Comm_split(world, 0, size - 1 - rank, &c[1]);  // reversed rank order
    MPI_Comm_dup(c[1], &c[2]);
  }
  ~Comms() {
    for (MPI_Comm& comm : c) MPI_Comm_free(&comm);
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
};

class Patterns {
 public:
  Patterns(Checker& checker, MPI_Comm world, MemorySpace& space, int n)
      : checker_(checker), world_(world), comms_(world), space_(space), n_(n) {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
  }

  void run_all() {
    opposite_orders();
    rotated_orders();
    complete_one_before_starting_another();
    blocking_on_the_other_comm();
    polled_completion();
  }

 private:
  // Fresh buffers for comms 0..2; comm 2 runs in place.
  std::vector<std::unique_ptr<Reduction>> fresh() {
    std::vector<std::unique_ptr<Reduction>> r;
    for (int id = 0; id < 3; ++id) {
      r.push_back(std::make_unique<Reduction>(space_, comms_.c[id], id, rank_, size_, n_, id == 2));
    }
    return r;
  }
  std::string label(const char* pattern) const { return std::string(pattern) + " n=" + std::to_string(n_) + " [" + space_.name() + "]"; }
  void start(Reduction& r, const std::string& what) { checker_.check(r.start() == MPI_SUCCESS, what + ": start"); }
  void wait_all(std::vector<std::unique_ptr<Reduction>>& r, const std::string& what, bool reverse = false) {
    std::vector<MPI_Request> requests;
    for (auto& one : r) requests.push_back(one->request());
    if (reverse) std::vector<MPI_Request>(requests.rbegin(), requests.rend()).swap(requests);
    const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    checker_.check(rc == MPI_SUCCESS, what + ": Waitall");
    for (auto& one : r) one->request() = MPI_REQUEST_NULL;  // Waitall freed them (in the copy)
    if (rc != MPI_SUCCESS) return;
    for (MPI_Request q : requests) checker_.check(q == MPI_REQUEST_NULL, what + ": Waitall nulls handles");
  }
  void verify(const std::vector<std::unique_ptr<Reduction>>& r, const std::string& what) {
    for (const auto& one : r) one->verify(checker_, what);
  }

  // Even ranks start comm 0 then comm 1, odd ranks comm 1 then comm 0; one Waitall.
  void opposite_orders() {
    const std::string what = label("opposite orders");
    auto r = fresh();
    r.pop_back();
    const int first = rank_ % 2;
    start(*r[first], what);
    start(*r[1 - first], what);
    wait_all(r, what);
    verify(r, what);
  }

  // Three communicators, each rank starting at a different one (rank % 3), completed in reverse.
  void rotated_orders() {
    const std::string what = label("rotated orders");
    auto r = fresh();
    for (int k = 0; k < 3; ++k) start(*r[(rank_ + k) % 3], what);
    wait_all(r, what, true);
    verify(r, what);
  }

  // The last rank starts comm 1 and waits for it before it even starts comm 0; every other rank
  // starts comm 0 then comm 1. Legal: comm 1 completes once all ranks started it, whatever comm 0 does.
  void complete_one_before_starting_another() {
    const std::string what = label("complete B before starting A");
    auto r = fresh();
    r.pop_back();
    if (rank_ == size_ - 1) {
      start(*r[1], what);
      checker_.check(MPI_Wait(&r[1]->request(), MPI_STATUS_IGNORE) == MPI_SUCCESS, what + ": Wait B");
      start(*r[0], what);
      checker_.check(MPI_Wait(&r[0]->request(), MPI_STATUS_IGNORE) == MPI_SUCCESS, what + ": Wait A");
    } else {
      start(*r[0], what);
      start(*r[1], what);
      wait_all(r, what);
    }
    verify(r, what);
  }

  // Even ranks: Iallreduce on comm 0, then a blocking Allreduce on comm 1, then Wait; odd ranks do
  // the blocking Allreduce on comm 1 before they start comm 0. (Each communicator sees one kind of
  // call on every rank: a blocking collective never matches a nonblocking one.) The blocking call
  // must complete while the other communicator's operation is in flight on the even ranks.
  void blocking_on_the_other_comm() {
    const std::string what = label("blocking on the other comm");
    auto r = fresh();
    r.pop_back();
    const bool even = rank_ % 2 == 0;
    if (even) start(*r[0], what);
    checker_.check(r[1]->run_blocking() == MPI_SUCCESS, what + ": blocking Allreduce");
    if (!even) start(*r[0], what);
    checker_.check(MPI_Wait(&r[0]->request(), MPI_STATUS_IGNORE) == MPI_SUCCESS, what + ": Wait");
    verify(r, what);
  }

  // Opposite orders again, completed by polling: Testany on even ranks, Waitsome on odd ranks.
  void polled_completion() {
    const std::string what = label("polled completion");
    auto r = fresh();
    const int first = rank_ % 2 == 0 ? 0 : 2;
    for (int k = 0; k < 3; ++k) start(*r[first == 0 ? k : 2 - k], what);
    MPI_Request requests[3] = {r[0]->request(), r[1]->request(), r[2]->request()};
    int completed = 0, rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && completed < 3) {
      if (rank_ % 2 == 0) {
        int index = MPI_UNDEFINED, flag = 0;
        rc = MPI_Testany(3, requests, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) ++completed;
      } else {
        int outcount = 0, indices[3];
        rc = MPI_Waitsome(3, requests, &outcount, indices, MPI_STATUSES_IGNORE);
        if (outcount != MPI_UNDEFINED) completed += outcount;
      }
    }
    checker_.check(rc == MPI_SUCCESS && completed == 3, what + ": every request completed once");
    for (int k = 0; k < 3; ++k) r[k]->request() = requests[k];
    verify(r, what);
  }

  Checker& checker_;
  MPI_Comm world_;
  Comms comms_;
  MemorySpace& space_;
  int n_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

void check_cross_comm_order(Checker& checker, MPI_Comm world, MemorySpace& space, int n) {
  Patterns(checker, world, space, n).run_all();
}

}  // namespace mcrp_test
