// Nonblocking collectives on device buffers (issue 3): Iallreduce (and in place), Ibcast, Iallgather,
// Ialltoallv and Ireduce_scatter_block through NCCL, and staged ones (MPI_SHORT sum: no 16-bit
// integers in NCCL; an MPI_Op_create user op) through pinned host memory, issued in batches and
// completed with Waitall, Wait in reverse order, a Test loop per request, or one at a time. Then
// the cross-communicator reordering patterns (tests/mpi/cross_comm_order.cpp) on device buffers:
// the test that would deadlock if guarantee 2 were dropped. If the library launched every rank's
// NCCL work in one fixed per-rank order (one stream for all communicators, or each launch held back
// until the previous call finished), "even ranks A then B, odd ranks B then A" would leave each
// rank's first kernel waiting inside NCCL for a peer kernel queued behind that peer's other
// communicator: a cycle. Exits 77 without a CUDA device. Inputs are small integers: exact sums.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/gpu/device_memory.h"
#include "tests/mpi/check.h"
#include "tests/mpi/cross_comm_order.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

// One issued operation: its device buffers, its request and the host reference of its result.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual int issue() = 0;
  virtual void verify(Checker& checker) const = 0;
  MPI_Request request = MPI_REQUEST_NULL;
};

template <class T>
class Typed final : public Pending {
 public:
  using Issue = std::function<int(const T* send, T* recv, MPI_Request* request)>;
  Typed(MemorySpace& space, std::string name, const std::vector<T>& send, const std::vector<T>& recv,
        std::vector<T> want, Issue issue)
      : name_(std::move(name)), send_(space, send), recv_(space, recv), want_(std::move(want)), issue_(std::move(issue)) {}
  int issue() override { return issue_(send_.data(), recv_.data(), &request); }
  void verify(Checker& checker) const override {
    const std::vector<T> got = recv_.download();
    checker.check(request == MPI_REQUEST_NULL, name_ + ": request freed by completion");
    checker.check(got.size() == want_.size(), name_ + ": result size");
    if (got.size() == want_.size()) checker.expect_equal(name_, MPI_SUCCESS, got.data(), want_.data(), want_.size());
  }

 private:
  std::string name_;
  SpaceBuffer<T> send_;
  SpaceBuffer<T> recv_;
  std::vector<T> want_;
  Issue issue_;
};

void int_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<const int*>(in)[i];
}

template <class T>
T element(int rank, int i) { return static_cast<T>((rank + 1) * 3 + i % 11); }
template <class T>
std::vector<T> elements(int rank, int count, int offset = 0) {
  std::vector<T> v(count);
  for (int i = 0; i < count; ++i) v[i] = element<T>(rank, offset + i);
  return v;
}
template <class T>
std::vector<T> sum_over_ranks(int size, int count, int offset = 0) {
  std::vector<T> s(count, T(0));
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < count; ++i) s[i] = static_cast<T>(s[i] + element<T>(q, offset + i));
  return s;
}
std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t k = 1; k < d.size(); ++k) d[k] = d[k - 1] + counts[k - 1];
  return d;
}

class Batch {
 public:
  Batch(MemorySpace& space, MPI_Comm comm, MPI_Op user_sum, int n) : space_(space), comm_(comm), user_sum_(user_sum), n_(n) {
    MPI_Comm_rank(comm, &me_);
    MPI_Comm_size(comm, &p_);
  }

  std::vector<std::unique_ptr<Pending>> build(const std::string& mode) const {
    const int n = n_, p = p_, me = me_, last = p - 1;
    MPI_Comm comm = comm_;
    const std::string tag = " n=" + std::to_string(n) + " [" + mode + "]";
    std::vector<std::unique_ptr<Pending>> all;
    auto add = [&](auto pending) { all.push_back(std::move(pending)); };
    using F = Typed<float>;
    add(std::make_unique<F>(space_, "Iallreduce float" + tag, elements<float>(me, n), std::vector<float>(n, -1),
                            sum_over_ranks<float>(p, n), [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Iallreduce(s, r, n, MPI_FLOAT, MPI_SUM, comm, q);
                            }));
    add(std::make_unique<F>(space_, "Iallreduce in place" + tag, std::vector<float>(), elements<float>(me, n),
                            sum_over_ranks<float>(p, n), [=](const float*, float* r, MPI_Request* q) {
                              return MPI_Iallreduce(MPI_IN_PLACE, r, n, MPI_FLOAT, MPI_SUM, comm, q);
                            }));
    add(std::make_unique<F>(space_, "Ibcast root last" + tag, std::vector<float>(),
                            me == last ? elements<float>(last, n) : std::vector<float>(n, -1), elements<float>(last, n),
                            [=](const float*, float* r, MPI_Request* q) { return MPI_Ibcast(r, n, MPI_FLOAT, last, comm, q); }));
    std::vector<float> gathered;
    for (int k = 0; k < p; ++k) {
      const std::vector<float> theirs = elements<float>(k, n);
      gathered.insert(gathered.end(), theirs.begin(), theirs.end());
    }
    add(std::make_unique<F>(space_, "Iallgather" + tag, elements<float>(me, n), std::vector<float>(n * p, -1), gathered,
                            [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Iallgather(s, n, MPI_FLOAT, r, n, MPI_FLOAT, comm, q);
                            }));
    // Ialltoallv: rank a sends n + a + b elements to rank b (from offset 100 * b of its values).
    std::vector<int> sc(p), rc(p);
    for (int k = 0; k < p; ++k) {
      sc[k] = n + me + k;
      rc[k] = n + k + me;
    }
    const std::vector<int> sd = displacements(sc), rd = displacements(rc);
    std::vector<float> a2a_send, a2a_want;
    for (int k = 0; k < p; ++k) {
      const std::vector<float> to_k = elements<float>(me, sc[k], 100 * k), from_k = elements<float>(k, rc[k], 100 * me);
      a2a_send.insert(a2a_send.end(), to_k.begin(), to_k.end());
      a2a_want.insert(a2a_want.end(), from_k.begin(), from_k.end());
    }
    add(std::make_unique<F>(space_, "Ialltoallv" + tag, a2a_send, std::vector<float>(a2a_want.size(), -1), a2a_want,
                            [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Ialltoallv(s, sc.data(), sd.data(), MPI_FLOAT, r, rc.data(), rd.data(), MPI_FLOAT,
                                                    comm, q);
                            }));
    add(std::make_unique<F>(space_, "Ireduce_scatter_block" + tag, elements<float>(me, n * p), std::vector<float>(n, -1),
                            sum_over_ranks<float>(p, n, me * n), [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Ireduce_scatter_block(s, r, n, MPI_FLOAT, MPI_SUM, comm, q);
                            }));
    add(std::make_unique<Typed<short>>(space_, "Iallreduce MPI_SHORT (staged)" + tag, elements<short>(me, n),
                                       std::vector<short>(n, -1), sum_over_ranks<short>(p, n),
                                       [=](const short* s, short* r, MPI_Request* q) {
                                         return MPI_Iallreduce(s, r, n, MPI_SHORT, MPI_SUM, comm, q);
                                       }));
    const MPI_Op user = user_sum_;
    add(std::make_unique<Typed<int>>(space_, "Iallreduce user op (staged)" + tag, elements<int>(me, n),
                                     std::vector<int>(n, -1), sum_over_ranks<int>(p, n),
                                     [=](const int* s, int* r, MPI_Request* q) {
                                       return MPI_Iallreduce(s, r, n, MPI_INT, user, comm, q);
                                     }));
    return all;
  }

 private:
  MemorySpace& space_;
  MPI_Comm comm_;
  MPI_Op user_sum_;
  int n_, me_ = 0, p_ = 1;
};

enum class Completion { waitall, wait_reverse, test_each, one_at_a_time };

void run_batch(Checker& checker, const Batch& batch, Completion how) {
  const char* names[] = {"Waitall", "Wait reverse", "Test loop", "one at a time"};
  auto ops = batch.build(names[static_cast<int>(how)]);
  std::vector<MPI_Request> requests;
  int rc = MPI_SUCCESS;
  for (auto& op : ops) {
    rc = op->issue();
    checker.check(rc == MPI_SUCCESS && op->request != MPI_REQUEST_NULL, "issue");
    if (how == Completion::one_at_a_time) {
      checker.check(MPI_Wait(&op->request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait");
      op->verify(checker);
    }
  }
  if (how == Completion::one_at_a_time) return;
  if (how == Completion::waitall) {
    for (auto& op : ops) requests.push_back(op->request);
    rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t k = 0; k < ops.size(); ++k) ops[k]->request = requests[k];
  } else if (how == Completion::wait_reverse) {
    for (auto it = ops.rbegin(); it != ops.rend() && rc == MPI_SUCCESS; ++it) rc = MPI_Wait(&(*it)->request, MPI_STATUS_IGNORE);
  } else {
    for (auto& op : ops) {
      int flag = 0;
      while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&op->request, &flag, MPI_STATUS_IGNORE);
    }
  }
  checker.check(rc == MPI_SUCCESS, std::string("completion by ") + names[static_cast<int>(how)]);
  for (auto& op : ops) op->verify(checker);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!mcrp_test::select_cuda_device(MPI_COMM_WORLD)) {
    MPI_Finalize();
    return mcrp_test::kSkipCode;
  }
  Checker checker;
  mcrp_test::DeviceMemory device;
  MPI_Op user_sum;
  MPI_Op_create(int_sum, 1, &user_sum);
  for (int n : {0, 1, 1000, 65539}) {
    const Batch batch(device, MPI_COMM_WORLD, user_sum, n);
    for (Completion how : {Completion::waitall, Completion::wait_reverse, Completion::test_each, Completion::one_at_a_time}) {
      run_batch(checker, batch, how);
    }
    mcrp_test::check_cross_comm_order(checker, MPI_COMM_WORLD, device, n);
  }
  MPI_Op_free(&user_sum);
  const int rc = checker.finish(MPI_COMM_WORLD, "test_nonblocking_gpu");
  MPI_Finalize();
  return rc;
}
