#include "tests/mpi/check.h"

#include <cstdio>
#include <cstdlib>

namespace mcrp_test {

namespace {

// Enough to diagnose without drowning the log; MCRP_TEST_PRINT_FAILURES=<n> shows more.
long failures_printed_per_rank() {
  static const long limit = [] {
    const char* env = std::getenv("MCRP_TEST_PRINT_FAILURES");
    return env != nullptr ? std::atol(env) : 20L;
  }();
  return limit;
}

const char* outcome_prefix() {
  static const char* prefix = std::getenv("MCRP_TEST_OUTCOMES");
  return prefix != nullptr && prefix[0] != '\0' ? prefix : nullptr;
}

std::string outcome_name(const std::string& what) { return what.substr(0, what.find(": ")); }

}  // namespace

void Checker::check(bool ok, const std::string& what) {
  if (outcome_prefix() != nullptr && !beyond_base_) outcomes_.insert((ok ? "PASS " : "FAIL ") + outcome_name(what));
  count(ok, what);
}

void Checker::check_beyond_base(bool ok, const std::string& what) { count(ok, what); }

void Checker::count(bool ok, const std::string& what) {
  if (ok) {
    ++passed_;
    return;
  }
  ++failed_;
  if (failed_ <= failures_printed_per_rank()) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "[rank %d] FAIL %s\n", rank, what.c_str());
  }
}

void Checker::skip(const std::string& reason) {
  ++skipped_;
  if (outcome_prefix() != nullptr) outcomes_.insert("SKIP " + reason);
  if (skip_reasons_.insert(reason).second) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "[rank %d] SKIP %s\n", rank, reason.c_str());
  }
}

void Checker::absorb(const Checker& other) {
  passed_ += other.passed_;
  failed_ += other.failed_;
  skipped_ += other.skipped_;
  skip_reasons_.insert(other.skip_reasons_.begin(), other.skip_reasons_.end());
  outcomes_.insert(other.outcomes_.begin(), other.outcomes_.end());
}

int Checker::finish(MPI_Comm comm, const char* program) const {
  long local[3] = {passed_, failed_, skipped_};
  long total[3] = {0, 0, 0};
  PMPI_Allreduce(local, total, 3, MPI_LONG, MPI_SUM, comm);
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (const char* prefix = outcome_prefix()) {
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    const std::string path = std::string(prefix) + "." + std::to_string(world_rank);
    if (FILE* file = std::fopen(path.c_str(), "w")) {
      for (const std::string& line : outcomes_) std::fprintf(file, "%s\n", line.c_str());
      std::fclose(file);
    }
  }
  if (rank == 0) {
    std::printf("%s on %d ranks: %ld passed, %ld failed, %ld skipped\n", program, size, total[0], total[1],
                total[2]);
    std::fflush(stdout);
  }
  return total[1] == 0 ? 0 : 1;
}

}  // namespace mcrp_test
