// Which cases of a bad-input table a test program runs, for the programs that have such tables
// (test_bad_input, test_block_collectives, test_local_calls). Options:
//   --only REGEX          only the cases whose name matches (finding base-MPI defects one at a time;
//                         a POSIX extended regular expression, searched for in the name)
//   --skip REGEX          not the cases whose name matches (what goes straight to a base MPI that
//                         gets it wrong, in the ABI matrix)
//   --trace               print each case's name to stderr before its call: after a crash, the last
//                         one printed is the case it was in
//   --run-base-defects    run the cases the base MPI is known to get wrong without the library too
//                         (to see whether a newer base MPI still does)
// A case the base MPI gets wrong (it crashes, or reports another class or nothing; the reason names
// the defect) runs only with the library, and its checks are made beyond the base (check.h): the
// comparison mode (tests/compare) leaves them out of the outcomes it compares.
#pragma once
#include <mpi.h>
#include <regex.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"

namespace mcrp_test {

class CaseFilter {
 public:
  CaseFilter(Checker& checker, int argc, char** argv)
      : checker_(checker),
        trace_(flag(argc, argv, "--trace")),
        run_base_defects_(flag(argc, argv, "--run-base-defects")),
        // The library answers 1 here, plain MPICH 0.
        library_(MPIX_Query_cuda_support() == 1) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    filtered_ = compile(option(argc, argv, "--only", ""), "--only", &only_);
    skipping_ = compile(option(argc, argv, "--skip", ""), "--skip", &skip_);
  }
  ~CaseFilter() {
    if (filtered_) regfree(&only_);
    if (skipping_) regfree(&skip_);
  }
  CaseFilter(const CaseFilter&) = delete;
  CaseFilter& operator=(const CaseFilter&) = delete;

  bool library() const { return library_; }

  bool wanted(const std::string& name) const {
    if (skipping_ && regexec(&skip_, name.c_str(), 0, nullptr, 0) == 0) return false;
    return !filtered_ || regexec(&only_, name.c_str(), 0, nullptr, 0) == 0;
  }

  // Whether a case the base MPI gets wrong (`base_defect`, or nullptr) is left out here: without the
  // library, unless --run-base-defects. The skip is reported with the reason.
  bool skips_base_defect(const char* base_defect) const {
    if (base_defect == nullptr || library_ || run_base_defects_) return false;
    checker_.skip("base MPI defect (library-only cases): " + std::string(base_defect));
    return true;
  }

  // Whether to run the case `name`: wanted, and not one the base MPI gets wrong (`base_defect`, or
  // nullptr) without the library, which is skipped with the reason. Traces the cases it runs.
  bool run(const std::string& name, const char* base_defect) {
    if (!wanted(name) || skips_base_defect(base_defect)) return false;
    if (trace_) std::fprintf(stderr, "[rank %d] %s\n", rank_, name.c_str());
    return true;
  }

 private:
  // False for an empty pattern; exits on one that is not a regular expression.
  static bool compile(const std::string& pattern, const char* option_name, regex_t* out) {
    if (pattern.empty()) return false;
    if (regcomp(out, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
      std::fprintf(stderr, "%s: not a regular expression: %s\n", option_name, pattern.c_str());
      std::exit(2);
    }
    return true;
  }

  Checker& checker_;
  bool filtered_ = false;
  bool skipping_ = false;
  // POSIX's regex, not std::regex: GCC 12 warns inside std::regex's templates (-Wmaybe-uninitialized,
  // 62 lines of the sanitizer build's log).
  regex_t only_{};
  regex_t skip_{};
  bool trace_;
  bool run_base_defects_;
  bool library_;
  int rank_ = 0;
};

}  // namespace mcrp_test
