// Which cases of a bad-input table a test program runs, for the programs that have such tables
// (test_bad_input, test_block_collectives, test_local_calls). Options:
//   --only REGEX          only the cases whose name matches (finding base-MPI defects one at a time)
//   --trace               print each case's name to stderr before its call: after a crash, the last
//                         one printed is the case it was in
//   --run-base-defects    run the cases the base MPI is known to get wrong without the library too
//                         (to see whether a newer base MPI still does)
// A case the base MPI gets wrong (it crashes, or reports another class or nothing; the reason names
// the defect) runs only with the library, and its checks are made beyond the base (check.h): the
// comparison mode (tests/compare) leaves them out of the outcomes it compares.
#pragma once
#include <mpi.h>

#include <cstdio>
#include <regex>
#include <string>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"

namespace mcrp_test {

class CaseFilter {
 public:
  CaseFilter(Checker& checker, int argc, char** argv)
      : checker_(checker),
        filtered_(!option(argc, argv, "--only", "").empty()),
        only_(option(argc, argv, "--only", "")),
        trace_(flag(argc, argv, "--trace")),
        run_base_defects_(flag(argc, argv, "--run-base-defects")),
        // The library answers 1 here, plain MPICH 0.
        library_(MPIX_Query_cuda_support() == 1) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  }

  bool library() const { return library_; }

  bool wanted(const std::string& name) const { return !filtered_ || std::regex_search(name, only_); }

  // Whether to run the case `name`: wanted, and not one the base MPI gets wrong (`base_defect`, or
  // nullptr) without the library, which is skipped with the reason. Traces the cases it runs.
  bool run(const std::string& name, const char* base_defect) {
    if (!wanted(name)) return false;
    if (base_defect != nullptr && !library_ && !run_base_defects_) {
      checker_.skip("base MPI defect (library-only cases): " + std::string(base_defect));
      return false;
    }
    if (trace_) std::fprintf(stderr, "[rank %d] %s\n", rank_, name.c_str());
    return true;
  }

 private:
  Checker& checker_;
  bool filtered_;
  std::regex only_;
  bool trace_;
  bool run_base_defects_;
  bool library_;
  int rank_ = 0;
};

}  // namespace mcrp_test
