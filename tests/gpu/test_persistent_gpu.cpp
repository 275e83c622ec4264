// Persistent collectives on device buffers (issue 3): Allreduce_init (NCCL), Bcast_init (NCCL),
// Reduce_scatter_block_init (NCCL) and an MPI_SHORT Allreduce_init (staged: NCCL has no 16-bit
// integers), on two communicators, started 6 times with new data. Even ranks Startall the requests
// of communicator A before B's, odd ranks B's before A's: legal MPI, since the two communicators are
// independent, and only possible because MPI_Start only starts the device work (it used to run it to
// completion, which made this order deadlock). Completed in turn with Waitall, a Testall loop,
// Waitany and Waitsome; every result is checked against a host reference; then freed.
// Exits 77 without a CUDA device (unless --host or --fake-device).
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/check.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::SpaceBuffer;

constexpr int kStarts = 6;
constexpr int kCount = 4099;  // odd, above NCCL's small-message protocols' thresholds

template <class T>
T value(int rank, int i, int start, int comm_id) { return static_cast<T>((rank + 1) * (comm_id + 2) + (i + start) % 9); }

// The persistent requests of one communicator and the buffers bound to them.
class CommRequests {
 public:
  CommRequests(mcrp_test::MemorySpace& space, MPI_Comm comm, int id)
      : comm_(comm), id_(id), f_send_(space, kCount), f_recv_(space, kCount), bcast_(space, kCount),
        s_send_(space, kCount), s_recv_(space, kCount) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    rs_send_ = std::make_unique<SpaceBuffer<float>>(space, static_cast<std::size_t>(kCount) * size_);
    rs_recv_ = std::make_unique<SpaceBuffer<float>>(space, kCount);
    MPI_Request r;
    MPI_Allreduce_init(f_send_.data(), f_recv_.data(), kCount, MPI_FLOAT, MPI_SUM, comm, MPI_INFO_NULL, &r);
    requests.push_back(r);
    MPI_Bcast_init(bcast_.data(), kCount, MPI_FLOAT, size_ - 1, comm, MPI_INFO_NULL, &r);
    requests.push_back(r);
    MPI_Reduce_scatter_block_init(rs_send_->data(), rs_recv_->data(), kCount, MPI_FLOAT, MPI_SUM, comm, MPI_INFO_NULL, &r);
    requests.push_back(r);
    MPI_Allreduce_init(s_send_.data(), s_recv_.data(), kCount, MPI_SHORT, MPI_SUM, comm, MPI_INFO_NULL, &r);
    requests.push_back(r);
  }

  void fill(int start) {
    std::vector<float> f(kCount), b(kCount, -1.0f), rs(static_cast<std::size_t>(kCount) * size_);
    std::vector<short> s(kCount);
    for (int i = 0; i < kCount; ++i) {
      f[i] = value<float>(rank_, i, start, id_);
      s[i] = value<short>(rank_, i, start, id_);
      if (rank_ == size_ - 1) b[i] = value<float>(rank_, i, start + 1, id_);
    }
    for (std::size_t i = 0; i < rs.size(); ++i) rs[i] = value<float>(rank_, static_cast<int>(i), start, id_);
    f_send_.upload(f);
    bcast_.upload(b);
    rs_send_->upload(rs);
    s_send_.upload(s);
  }

  void verify(Checker& checker, int start, const std::string& how) const {
    std::vector<float> sum(kCount, 0.0f), bcast(kCount), rs(kCount, 0.0f);
    std::vector<short> ssum(kCount, 0);
    for (int i = 0; i < kCount; ++i) {
      for (int q = 0; q < size_; ++q) {
        sum[i] += value<float>(q, i, start, id_);
        ssum[i] = static_cast<short>(ssum[i] + value<short>(q, i, start, id_));
        rs[i] += value<float>(q, rank_ * kCount + i, start, id_);
      }
      bcast[i] = value<float>(size_ - 1, i, start + 1, id_);
    }
    const std::string what = "comm " + std::to_string(id_) + " start " + std::to_string(start) + " [" + how + "] ";
    const std::vector<float> got_sum = f_recv_.download(), got_bcast = bcast_.download(), got_rs = rs_recv_->download();
    const std::vector<short> got_ssum = s_recv_.download();
    checker.expect_equal(what + "Allreduce_init float", MPI_SUCCESS, got_sum.data(), sum.data(), sum.size());
    checker.expect_equal(what + "Bcast_init", MPI_SUCCESS, got_bcast.data(), bcast.data(), bcast.size());
    checker.expect_equal(what + "Reduce_scatter_block_init", MPI_SUCCESS, got_rs.data(), rs.data(), rs.size());
    checker.expect_equal(what + "Allreduce_init MPI_SHORT (staged)", MPI_SUCCESS, got_ssum.data(), ssum.data(), ssum.size());
  }

  std::vector<MPI_Request> requests;

 private:
  MPI_Comm comm_;
  int id_, rank_ = 0, size_ = 1;
  SpaceBuffer<float> f_send_, f_recv_, bcast_;
  SpaceBuffer<short> s_send_, s_recv_;
  std::unique_ptr<SpaceBuffer<float>> rs_send_, rs_recv_;
};

int complete(int how, std::vector<MPI_Request>& all) {
  const int n = static_cast<int>(all.size());
  int rc = MPI_SUCCESS, done = 0;
  switch (how) {
    case 0:
      return MPI_Waitall(n, all.data(), MPI_STATUSES_IGNORE);
    case 1:
      while (rc == MPI_SUCCESS && !done) rc = MPI_Testall(n, all.data(), &done, MPI_STATUSES_IGNORE);
      return rc;
    case 2:
      for (int k = 0; k < n && rc == MPI_SUCCESS; ++k) {
        int index = MPI_UNDEFINED;
        rc = MPI_Waitany(n, all.data(), &index, MPI_STATUS_IGNORE);
      }
      return rc;
    default:
      while (rc == MPI_SUCCESS && done < n) {
        int outcount = 0;
        std::vector<int> indices(n);
        rc = MPI_Waitsome(n, all.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
        done += outcount == MPI_UNDEFINED ? n : outcount;
      }
      return rc;
  }
}

}  // namespace

// --host: the same on host buffers (CPU CI), i.e. the base MPI's persistent requests through the
// library's Wait/Test family, which works around MPICH 4.0.2's Waitany/Waitsome on them.
// --fake-device (MCRPMPI_FAKE_DEVICE=1): the library's device persistent requests, staged, on CPU.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::unique_ptr<mcrp_test::MemorySpace> space = mcrp_test::space_from_arguments(argc, argv);
  if (space == nullptr) {
    MPI_Finalize();
    return mcrp_test::kSkipExitCode;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Checker checker;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  {
    CommRequests on_a(*space, a, 0), on_b(*space, b, 1);
    const char* names[] = {"Waitall", "Testall loop", "Waitany", "Waitsome"};
    for (int start = 0; start < kStarts; ++start) {
      on_a.fill(start);
      on_b.fill(start);
      const bool even = rank % 2 == 0;
      std::vector<MPI_Request> all = even ? on_a.requests : on_b.requests;
      const std::vector<MPI_Request>& second = even ? on_b.requests : on_a.requests;
      all.insert(all.end(), second.begin(), second.end());
      checker.check(MPI_Startall(static_cast<int>(all.size()), all.data()) == MPI_SUCCESS, "Startall");
      checker.check(complete(start % 4, all) == MPI_SUCCESS, std::string("completion by ") + names[start % 4]);
      on_a.verify(checker, start, names[start % 4]);
      on_b.verify(checker, start, names[start % 4]);
    }
    for (auto* set : {&on_a.requests, &on_b.requests}) {
      for (MPI_Request& r : *set) checker.check(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "Request_free");
    }
  }
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  const int rc = checker.finish(MPI_COMM_WORLD, (std::string("test_persistent_gpu on ") + space->name()).c_str());
  MPI_Finalize();
  return rc;
}
