// MCRPMPI_VERIFY=1 (issue 16 rule 2, issue 13 item 2): when ranks disagree on one collective, every
// rank gets the same MPI error, or the same fallback, within bounded time (ctest TIMEOUT), instead of
// some ranks waiting in a collective the others abandoned or ran differently. The last rank is the
// odd one out:
//   - a library check fails there only (a negative count): every rank fails with MPI_ERR_COUNT;
//   - it passes another datatype (same size), count, op or root, or a gather block of another size:
//     every rank fails with MPI_ERR_TYPE, MPI_ERR_COUNT, MPI_ERR_OP or MPI_ERR_ROOT;
//   - (fake device) it passes host buffers where the others pass device buffers: every rank takes
//     the base MPI and gets the right sum.
// Each through every call form (blocking, nonblocking, persistent; int and _c). The communicator
// stays usable afterwards. Without VERIFY these programs are erroneous and may hang (README).
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/entry_points.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr MPI_Count kCount = 4;

struct Disagreement {
  const char* what;
  Coll coll;
  int error_class;           // on every rank (MPI_SUCCESS: the fallback gives the right result)
  void (*odd)(CollArgs& a);  // what the last rank does differently
};

const Disagreement kDisagreements[] = {
    {"count -1 (a library check)", Coll::Allreduce, MPI_ERR_COUNT, [](CollArgs& a) { a.count = -1; }},
    {"sendcount -1 (a library check)", Coll::Gather, MPI_ERR_COUNT, [](CollArgs& a) { a.sendcount = -1; }},
    {"datatype MPI_FLOAT for MPI_INT", Coll::Allreduce, MPI_ERR_TYPE, [](CollArgs& a) { a.datatype = MPI_FLOAT; }},
    {"count 3 for 4", Coll::Allreduce, MPI_ERR_COUNT, [](CollArgs& a) { a.count = kCount - 1; }},
    {"count 3 for 4", Coll::Bcast, MPI_ERR_COUNT, [](CollArgs& a) { a.count = kCount - 1; }},
    {"op MPI_MAX for MPI_SUM", Coll::Allreduce, MPI_ERR_OP, [](CollArgs& a) { a.op = MPI_MAX; }},
    {"op MPI_MAX for MPI_SUM", Coll::Reduce_scatter_block, MPI_ERR_OP, [](CollArgs& a) { a.op = MPI_MAX; }},
    {"root 1 for 0", Coll::Bcast, MPI_ERR_ROOT, [](CollArgs& a) { a.root = 1; }},
    {"root 1 for 0", Coll::Reduce, MPI_ERR_ROOT, [](CollArgs& a) { a.root = 1; }},
    {"sendcount 3 for 4 (gather block)", Coll::Gather, MPI_ERR_COUNT, [](CollArgs& a) { a.sendcount = kCount - 1; }},
};

std::string form_label(CallForm form, CountForm counts) {
  return std::string(call_form_name(form)) + " " + form_name(counts);
}

class Run {
 public:
  Run(Checker& checker, MemorySpace& space) : checker_(checker), space_(space) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  // A correct call's arguments on `send`/`recv`: kCount ints per block, MPI_SUM, root 0.
  CollArgs correct(Coll coll, void* send, void* recv) const {
    CollArgs a;
    a.sendbuf = send;
    a.recvbuf = recv;
    a.count = a.sendcount = a.recvcount = kCount;
    a.datatype = a.sendtype = a.recvtype = MPI_INT;
    a.op = MPI_SUM;
    a.root = 0;
    a.comm = MPI_COMM_WORLD;
    if (coll == Coll::Bcast) a.recvbuf = send;
    return a;
  }

  void disagreement(const Disagreement& d, CallForm form, CountForm counts) {
    if (d.error_class == MPI_ERR_ROOT && size_ < 2) return;  // one rank cannot disagree on the root
    SpaceBuffer<int> send(space_, std::vector<int>(kCount * size_, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(kCount * size_, 0));
    CollArgs a = correct(d.coll, send.data(), recv.data());
    if (rank_ == size_ - 1) d.odd(a);
    const int rc = invoke(d.coll, form, counts, a, size_);
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
    checker_.check(error_class == d.error_class,
                   std::string(coll_name(d.coll)) + " " + form_label(form, counts) + ", last rank's " + d.what +
                       " (rank " + std::to_string(rank_) + "): expected class " + std::to_string(d.error_class) +
                       " on every rank, got " + std::to_string(error_class));
  }

  // The last rank's buffers are host memory, the others' in the space: every rank takes the base
  // MPI, and the sum is right everywhere.
  void memory_kinds(CallForm form, CountForm counts, MemorySpace& host) {
    MemorySpace& mine = rank_ == size_ - 1 ? host : space_;
    SpaceBuffer<int> send(mine, std::vector<int>(kCount, rank_ + 1));
    SpaceBuffer<int> recv(mine, std::vector<int>(kCount, 0));
    const CollArgs a = correct(Coll::Allreduce, send.data(), recv.data());
    const int rc = invoke(Coll::Allreduce, form, counts, a, size_);
    const std::vector<int> expected(kCount, size_ * (size_ + 1) / 2);
    checker_.expect_equal("allreduce " + form_label(form, counts) + ", last rank on host memory", rc,
                          recv.download().data(), expected.data(), kCount);
  }

  void still_usable() {
    SpaceBuffer<int> send(space_, std::vector<int>(kCount, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(kCount, 0));
    const int rc = MPI_Allreduce(send.data(), recv.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const std::vector<int> expected(kCount, size_ * (size_ + 1) / 2);
    checker_.expect_equal("allreduce after the disagreements", rc, recv.download().data(), expected.data(), kCount);
  }

 private:
  Checker& checker_;
  MemorySpace& space_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::string space_name = option(argc, argv, "--space", "host");
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      Checker checker;
      Run run(checker, *space);
      HostMemory host;
      for (CallForm form : kCallForms)
        for (CountForm counts : kCountForms) {
          for (const Disagreement& d : kDisagreements) run.disagreement(d, form, counts);
          if (space_name != "host") run.memory_kinds(form, counts, host);
        }
      // Nonblocking: the error comes at the call, on every rank, with no request left behind.
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      SpaceBuffer<int> send(*space, std::vector<int>(kCount * size, 1));
      SpaceBuffer<int> recv(*space, std::vector<int>(kCount * size, 0));
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = MPI_Iallgather(send.data(), rank == size - 1 ? -1 : kCount, MPI_INT, recv.data(), kCount, MPI_INT,
                                    MPI_COMM_WORLD, &request);
      checker.check(rc != MPI_SUCCESS && request == MPI_REQUEST_NULL,
                    "iallgather, sendcount -1 on the last rank: an error and no request left, on every rank");
      run.still_usable();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_verify_agreement --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
