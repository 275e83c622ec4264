// Checker: counts this rank's checks and reports one job-wide summary ("N passed, M failed, K skipped").
// It reaches MPI only through PMPI_ entry points, so the report does not depend on the library
// under test: a broken wrapper shows up as failed checks, not as a broken summary.
//
// With MCRP_TEST_OUTCOMES=<prefix> set, finish() also writes every outcome of this rank to
// <prefix>.<rank>, one line each ("PASS name", "FAIL name", "SKIP reason"), where the name is the
// check's text up to its first ": " (what follows is detail that differs between outcomes). The
// comparison mode (tests/compare) runs a program with and without the library and requires the
// PASS/FAIL outcomes to be equal; skips may differ (the library runs some cases the base MPI cannot,
// and those checks are made "beyond base", outside the log).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <set>
#include <sstream>
#include <string>

namespace mcrp_test {

class Checker {
 public:
  // Records one check; prints the first failures of this rank (with `what`) to stderr.
  void check(bool ok, const std::string& what);

  // A case deliberately not run; each distinct reason is printed once per rank.
  void skip(const std::string& reason);

  // A check of what the library adds beyond the base MPI (a case the base MPI cannot run): counted,
  // but left out of the outcome log, since the run without the library cannot have it.
  void check_beyond_base(bool ok, const std::string& what);

  // For its lifetime, when `active`, every check counts as check_beyond_base.
  class BeyondBase {
   public:
    BeyondBase(Checker& checker, bool active) : checker_(checker), saved_(checker.beyond_base_) {
      checker_.beyond_base_ = saved_ || active;
    }
    ~BeyondBase() { checker_.beyond_base_ = saved_; }
    BeyondBase(const BeyondBase&) = delete;
    BeyondBase& operator=(const BeyondBase&) = delete;

   private:
    Checker& checker_;
    bool saved_;
  };

  // One check: the call returned MPI_SUCCESS and got[0..n) equals expected[0..n).
  template <class T>
  void expect_equal(const std::string& what, int rc, const T* got, const T* expected, std::size_t n) {
    if (rc != MPI_SUCCESS) {
      check(false, what + ": returned error " + std::to_string(rc));
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!(got[i] == expected[i])) {
        std::ostringstream out;
        out << what << ": element " << i << " of " << n << " expected " << expected[i] << " got " << got[i];
        check(false, out.str());
        return;
      }
    }
    check(true, what);
  }

  // Adds another checker's counts and outcomes to this one's (a thread's, once it has ended).
  void absorb(const Checker& other);

  // Sums the counts over `comm`, prints the summary on its rank 0 and returns the exit code every
  // rank should use: 0 when nothing failed anywhere, 1 otherwise.
  int finish(MPI_Comm comm, const char* program) const;

 private:
  void count(bool ok, const std::string& what);

  long passed_ = 0;
  long failed_ = 0;
  long skipped_ = 0;
  std::set<std::string> skip_reasons_;
  std::multiset<std::string> outcomes_;  // only with MCRP_TEST_OUTCOMES
  bool beyond_base_ = false;
};

}  // namespace mcrp_test
