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

// One Iallreduce (float sum) or Ialltoall on one communicator, with its buffers and reference. The
// all-to-all is there for NCCL's point-to-point connections, made per peer at a communicator's first
// such launch (MCRPMPI_NCCL_INLINE_LAUNCH: made on the caller, they would hang these patterns).
enum class Collective { allreduce, alltoall };

class CollectiveCall {
 public:
  CollectiveCall(MemorySpace& space, Collective collective, MPI_Comm comm, int id, int n, bool in_place)
      : collective_(collective), comm_(comm), id_(id), in_place_(in_place) {
    int me = 0, size = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    count_ = n;  // all-to-all: per peer
    const int total = collective == Collective::alltoall ? n * size : n;
    std::vector<float> mine(total);
    for (int i = 0; i < total; ++i) mine[i] = value(me, i / n, i % n);
    expected_.assign(static_cast<std::size_t>(total), 0.0f);
    for (int i = 0; i < total; ++i) {
      if (collective == Collective::alltoall) {
        expected_[i] = value(i / n, me, i % n);  // block j: what rank j sent to this one
      } else {
        for (int q = 0; q < size; ++q) expected_[i] += value(q, i / n, i % n);
      }
    }
    send_ = std::make_unique<SpaceBuffer<float>>(space, mine);
    recv_ = std::make_unique<SpaceBuffer<float>>(space, std::vector<float>(total, -1.0f));
    if (in_place_) recv_->upload(mine);
  }

  int start() {
    const void* send = in_place_ ? MPI_IN_PLACE : send_->data();
    if (collective_ == Collective::alltoall) {
      return MPI_Ialltoall(send, count_, MPI_FLOAT, recv_->data(), count_, MPI_FLOAT, comm_, &request_);
    }
    return MPI_Iallreduce(send, recv_->data(), count_, MPI_FLOAT, MPI_SUM, comm_, &request_);
  }
  int run_blocking() {
    const void* send = in_place_ ? MPI_IN_PLACE : send_->data();
    if (collective_ == Collective::alltoall) {
      return MPI_Alltoall(send, count_, MPI_FLOAT, recv_->data(), count_, MPI_FLOAT, comm_);
    }
    return MPI_Allreduce(send, recv_->data(), count_, MPI_FLOAT, MPI_SUM, comm_);
  }
  MPI_Request& request() { return request_; }

  void verify(Checker& checker, const std::string& pattern) const {
    const std::vector<float> got = recv_->download();
    const std::string what = collective_ == Collective::alltoall ? ": all-to-all on comm " : ": sum on comm ";
    checker.check(request_ == MPI_REQUEST_NULL, pattern + ": request of comm " + std::to_string(id_) + " freed");
    checker.expect_equal(pattern + what + std::to_string(id_), MPI_SUCCESS, got.data(), expected_.data(),
                         expected_.size());
  }

 private:
  // What `from` contributes at element i of block `block` (the block for rank `block` in an
  // all-to-all): small integers, so float sums are exact in any order.
  float value(int from, int block, int i) const {
    return static_cast<float>((from + 1) * (id_ + 1) + (block * 3 + i) % 7);
  }

  Collective collective_;
  MPI_Comm comm_;
  int id_;
  int count_ = 0;
  bool in_place_;
  std::unique_ptr<SpaceBuffer<float>> send_, recv_;
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
  Patterns(Checker& checker, MPI_Comm world, MemorySpace& space, int n, Collective collective)
      : checker_(checker), world_(world), comms_(world), space_(space), n_(n), collective_(collective) {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
    // The NCCL communicators set up first (one allreduce on each), so that the all-to-all patterns
    // meet NCCL's point-to-point connections on ready communicators: behind a setup, which every
    // member joins, a launch's order would not matter.
    if (collective == Collective::alltoall) {
      for (int id = 0; id < 3; ++id) {
        CollectiveCall warm_up(space_, Collective::allreduce, comms_.c[id], id, 1, false);
        checker_.check(warm_up.run_blocking() == MPI_SUCCESS, label("set-up allreduce"));
      }
    }
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
  std::vector<std::unique_ptr<CollectiveCall>> fresh() {
    std::vector<std::unique_ptr<CollectiveCall>> r;
    for (int id = 0; id < 3; ++id) {
      r.push_back(std::make_unique<CollectiveCall>(space_, collective_, comms_.c[id], id, n_, id == 2));
    }
    return r;
  }
  std::string label(const char* pattern) const {
    return std::string(pattern) + (collective_ == Collective::alltoall ? " (alltoall)" : "") + " n=" +
           std::to_string(n_) + " [" + space_.name() + "]";
  }
  void start(CollectiveCall& r, const std::string& what) { checker_.check(r.start() == MPI_SUCCESS, what + ": start"); }
  void wait_all(std::vector<std::unique_ptr<CollectiveCall>>& r, const std::string& what, bool reverse = false) {
    std::vector<MPI_Request> requests;
    for (auto& one : r) requests.push_back(one->request());
    if (reverse) std::vector<MPI_Request>(requests.rbegin(), requests.rend()).swap(requests);
    const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    checker_.check(rc == MPI_SUCCESS, what + ": Waitall");
    for (auto& one : r) one->request() = MPI_REQUEST_NULL;  // Waitall freed them (in the copy)
    if (rc != MPI_SUCCESS) return;
    for (MPI_Request q : requests) checker_.check(q == MPI_REQUEST_NULL, what + ": Waitall nulls handles");
  }
  void verify(const std::vector<std::unique_ptr<CollectiveCall>>& r, const std::string& what) {
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
  Collective collective_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

void check_cross_comm_order(Checker& checker, MPI_Comm world, MemorySpace& space, int n) {
  Patterns(checker, world, space, n, Collective::allreduce).run_all();
  // Fresh communicators: their first all-to-all is a pattern's.
  Patterns(checker, world, space, n, Collective::alltoall).run_all();
}

}  // namespace mcrp_test
