// Every blocking collective entry point, int and _c form, on host buffers: with the library linked
// (or preloaded) the results must be exactly what the base MPI gives, i.e. equal to the references
// computed locally. Runs on COMM_WORLD, COMM_SELF, a dup, an odd/even split and a rank-reversed
// split, so 1-rank and odd-sized communicators appear at every job size.
// Prints "<N> passed, <M> failed" and exits non-zero when anything failed on any rank.
#include <mpi.h>

#include <vector>

#include "tests/mpi/suite.h"

namespace {

using mcrp_test::TestComm;

TestComm describe_comm(MPI_Comm comm, const char* name) {
  TestComm tc{comm, name, 0, 0};
  MPI_Comm_rank(comm, &tc.rank);
  MPI_Comm_size(comm, &tc.size);
  return tc;
}

// The communicators under test; the ones created here are freed by the destructor (before Finalize).
class TestComms {
 public:
  TestComms() {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup = MPI_COMM_NULL, parity = MPI_COMM_NULL, reversed = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    owned_ = {dup, parity, reversed};
    all_ = {describe_comm(MPI_COMM_WORLD, "world"), describe_comm(MPI_COMM_SELF, "self"),
            describe_comm(dup, "dup"), describe_comm(parity, "split-parity"),
            describe_comm(reversed, "split-reversed")};
  }
  ~TestComms() {
    for (MPI_Comm& c : owned_) MPI_Comm_free(&c);
  }
  TestComms(const TestComms&) = delete;
  TestComms& operator=(const TestComms&) = delete;
  const std::vector<TestComm>& all() const { return all_; }

 private:
  std::vector<MPI_Comm> owned_;
  std::vector<TestComm> all_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // Errors come back as codes, to be reported as failed checks; communicators made later inherit it.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int exit_code = 1;
  {
    mcrp_test::Checker checker;
    mcrp_test::OpTable ops;
    const mcrp_test::BaseMpiQuirks quirks = mcrp_test::BaseMpiQuirks::detect();
    TestComms comms;
    for (const TestComm& tc : comms.all()) {
      const mcrp_test::Env env{checker, ops, tc, quirks};
      mcrp_test::run_reductions(env);
      mcrp_test::run_rooted_movement(env);
      mcrp_test::run_exchanges(env);
      mcrp_test::run_derived_types(env);
      mcrp_test::run_barrier(env);
    }
    mcrp_test::run_bad_input(mcrp_test::Env{checker, ops, comms.all().front(), quirks});
    exit_code = checker.finish(MPI_COMM_WORLD, "test_collectives_host");
  }
  MPI_Finalize();
  return exit_code;
}
