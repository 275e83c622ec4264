// Nonblocking collectives on device buffers (issue 3): every nonblocking entry point but Iexscan
// (Iallreduce and in place, Ireduce, Ibcast, Iallgather(v), Igather(v), Iscatter(v), Ialltoall(v),
// Ireduce_scatter(_block), Ibarrier, Iallreduce_c, Iallgatherv_c) through NCCL, and staged ones
// (MPI_SHORT sum: no 16-bit integers in NCCL; an MPI_Op_create user op; Iscan), issued in batches and
// completed with Waitall, Wait in reverse order, a Test loop per request, or one at a time. Then
// the cross-communicator reordering patterns (tests/mpi/cross_comm_order.cpp) on device buffers:
// the test that would deadlock if guarantee 2 were dropped. If the library launched every rank's
// NCCL work in one fixed per-rank order (one stream for all communicators, or each launch held back
// until the previous call finished), "even ranks A then B, odd ranks B then A" would leave each
// rank's first kernel waiting inside NCCL for a peer kernel queued behind that peer's other
// communicator: a cycle. Exits 77 without a CUDA device (unless --host or --fake-device). Inputs
// are small integers: exact sums.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/check.h"
#include "tests/mpi/cross_comm_order.h"
#include "tests/mpi/dropped_arrays.h"

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
// Runs `call` on copies of two arrays that are dropped as soon as it returns, as mpi4py drops those
// of Iallgatherv and Ireduce_scatter (tests/mpi/dropped_arrays.h): work the library queues (behind
// an NCCL communicator's setup, say) must not read them later.
template <class C, class D, class Call>
int with_dropped_arrays(std::vector<C> counts, std::vector<D> displs, Call call) {
  const int rc = call(counts.data(), displs.data());
  mcrp_test::drop_array<C>(counts, mcrp_test::kDroppedCount);
  mcrp_test::drop_array<D>(displs, mcrp_test::kDroppedCount);
  return rc;
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
                              return with_dropped_arrays(sc, sd, [&](const int* c, const int* d) {
                                return with_dropped_arrays(rc, rd, [&](const int* rcounts, const int* rdispls) {
                                  return MPI_Ialltoallv(s, c, d, MPI_FLOAT, r, rcounts, rdispls, MPI_FLOAT, comm, q);
                                });
                              });
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
    add_rooted_and_vector_forms(all, tag);
    const MPI_Op user = user_sum_;
    add(std::make_unique<Typed<int>>(space_, "Iallreduce user op (staged)" + tag, elements<int>(me, n),
                                     std::vector<int>(n, -1), sum_over_ranks<int>(p, n),
                                     [=](const int* s, int* r, MPI_Request* q) {
                                       return MPI_Iallreduce(s, r, n, MPI_INT, user, comm, q);
                                     }));
    return all;
  }

 private:
  // The other nonblocking entry points (and two _c forms): each rooted collective with its root at
  // one end, the vector forms with uneven blocks, a scan, a barrier.
  void add_rooted_and_vector_forms(std::vector<std::unique_ptr<Pending>>& all, const std::string& tag) const {
    const int n = n_, p = p_, me = me_, last = p - 1;
    MPI_Comm comm = comm_;
    using F = Typed<float>;
    auto add = [&](auto pending) { all.push_back(std::move(pending)); };
    auto concatenated = [&](auto block_of) {
      std::vector<float> v;
      for (int k = 0; k < p; ++k) {
        const std::vector<float> b = block_of(k);
        v.insert(v.end(), b.begin(), b.end());
      }
      return v;
    };
    const std::vector<float> untouched_n(n, -1), untouched_np(static_cast<std::size_t>(n) * p, -1);
    add(std::make_unique<F>(space_, "Ireduce root last" + tag, elements<float>(me, n), untouched_n,
                            me == last ? sum_over_ranks<float>(p, n) : untouched_n,
                            [=](const float* s, float* r, MPI_Request* q) { return MPI_Ireduce(s, r, n, MPI_FLOAT, MPI_SUM, last, comm, q); }));
    const std::vector<float> gathered = concatenated([&](int k) { return elements<float>(k, n); });
    add(std::make_unique<F>(space_, "Igather root 0" + tag, elements<float>(me, n), untouched_np, me == 0 ? gathered : untouched_np,
                            [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Igather(s, n, MPI_FLOAT, r, n, MPI_FLOAT, 0, comm, q);
                            }));
    add(std::make_unique<F>(space_, "Iscatter root last" + tag, elements<float>(me, n * p), untouched_n,
                            elements<float>(last, n, me * n), [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Iscatter(s, n, MPI_FLOAT, r, n, MPI_FLOAT, last, comm, q);
                            }));
    add(std::make_unique<F>(space_, "Ialltoall" + tag, concatenated([&](int k) { return elements<float>(me, n, 100 * k); }),
                            untouched_np, concatenated([&](int k) { return elements<float>(k, n, 100 * me); }),
                            [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Ialltoall(s, n, MPI_FLOAT, r, n, MPI_FLOAT, comm, q);
                            }));
    // Uneven blocks: rank k contributes (or receives) n + k elements.
    std::vector<int> counts(p);
    for (int k = 0; k < p; ++k) counts[k] = n + k;
    const std::vector<int> displs = displacements(counts);
    const int total = displs[last] + counts[last];
    const std::vector<float> untouched_total(total, -1), untouched_mine(counts[me], -1);
    const std::vector<float> gathered_v = concatenated([&](int k) { return elements<float>(k, n + k); });
    add(std::make_unique<F>(space_, "Iallgatherv" + tag, elements<float>(me, counts[me]), untouched_total, gathered_v,
                            [=](const float* s, float* r, MPI_Request* q) {
                              return with_dropped_arrays(counts, displs, [&](const int* c, const int* d) {
                                return MPI_Iallgatherv(s, counts[me], MPI_FLOAT, r, c, d, MPI_FLOAT, comm, q);
                              });
                            }));
    add(std::make_unique<F>(space_, "Igatherv root last" + tag, elements<float>(me, counts[me]), untouched_total,
                            me == last ? gathered_v : untouched_total, [=](const float* s, float* r, MPI_Request* q) {
                              return with_dropped_arrays(counts, displs, [&](const int* c, const int* d) {
                                return MPI_Igatherv(s, counts[me], MPI_FLOAT, r, c, d, MPI_FLOAT, last, comm, q);
                              });
                            }));
    add(std::make_unique<F>(space_, "Iscatterv root 0" + tag, elements<float>(me, total), untouched_mine,
                            elements<float>(0, counts[me], displs[me]), [=](const float* s, float* r, MPI_Request* q) {
                              return with_dropped_arrays(counts, displs, [&](const int* c, const int* d) {
                                return MPI_Iscatterv(s, c, d, MPI_FLOAT, r, counts[me], MPI_FLOAT, 0, comm, q);
                              });
                            }));
    add(std::make_unique<F>(space_, "Ireduce_scatter uneven" + tag, elements<float>(me, total), untouched_mine,
                            sum_over_ranks<float>(p, counts[me], displs[me]), [=](const float* s, float* r, MPI_Request* q) {
                              return with_dropped_arrays(counts, displs, [&](const int* c, const int*) {
                                return MPI_Ireduce_scatter(s, r, c, MPI_FLOAT, MPI_SUM, comm, q);
                              });
                            }));
    add(std::make_unique<F>(space_, "Iscan (staged)" + tag, elements<float>(me, n), untouched_n, sum_over_ranks<float>(me + 1, n),
                            [=](const float* s, float* r, MPI_Request* q) { return MPI_Iscan(s, r, n, MPI_FLOAT, MPI_SUM, comm, q); }));
    add(std::make_unique<F>(space_, "Ibarrier" + tag, std::vector<float>(), std::vector<float>(), std::vector<float>(),
                            [=](const float*, float*, MPI_Request* q) { return MPI_Ibarrier(comm, q); }));
    // Large-count forms: the same machinery behind MPI_Count arguments.
    add(std::make_unique<F>(space_, "Iallreduce_c" + tag, elements<float>(me, n), untouched_n, sum_over_ranks<float>(p, n),
                            [=](const float* s, float* r, MPI_Request* q) {
                              return MPI_Iallreduce_c(s, r, static_cast<MPI_Count>(n), MPI_FLOAT, MPI_SUM, comm, q);
                            }));
    std::vector<MPI_Count> wide_counts(counts.begin(), counts.end());
    std::vector<MPI_Aint> wide_displs(displs.begin(), displs.end());
    add(std::make_unique<F>(space_, "Iallgatherv_c" + tag, elements<float>(me, counts[me]), untouched_total, gathered_v,
                            [=](const float* s, float* r, MPI_Request* q) {
                              return with_dropped_arrays(wide_counts, wide_displs, [&](const MPI_Count* c, const MPI_Aint* d) {
                                return MPI_Iallgatherv_c(s, wide_counts[me], MPI_FLOAT, r, c, d, MPI_FLOAT, comm, q);
                              });
                            }));
  }

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

// --host runs the same checks on host buffers (CPU CI): that validates the test's own references and
// counts, so a GPU run only has the library left to fail. --fake-device (MCRPMPI_FAKE_DEVICE=1) runs
// the library's device request machinery on CPU, staged.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::unique_ptr<MemorySpace> chosen = mcrp_test::space_from_arguments(argc, argv);
  if (chosen == nullptr) {
    MPI_Finalize();
    return mcrp_test::kSkipExitCode;
  }
  MemorySpace& space = *chosen;
  Checker checker;
  MPI_Op user_sum;
  MPI_Op_create(int_sum, 1, &user_sum);
  for (int n : {0, 1, 1000, 65539}) {
    const Batch batch(space, MPI_COMM_WORLD, user_sum, n);
    for (Completion how : {Completion::waitall, Completion::wait_reverse, Completion::test_each, Completion::one_at_a_time}) {
      run_batch(checker, batch, how);
    }
    mcrp_test::check_cross_comm_order(checker, MPI_COMM_WORLD, space, n);
  }
  MPI_Op_free(&user_sum);
  const int rc = checker.finish(MPI_COMM_WORLD, (std::string("test_nonblocking_gpu on ") + space.name()).c_str());
  MPI_Finalize();
  return rc;
}
