// The check the bad-input sections of the device-buffer test programs make after an erroneous call:
// it returned the expected MPI error class (MPI_Error_class, which knows the library's own codes)
// and wrote nothing into `buffer`, which holds only `unwritten` values before the call.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/mpi/case_filter.h"
#include "tests/mpi/check.h"
#include "tests/mpi/memory_space.h"

namespace mcrp_test {

// MPI_SUCCESS for success, else the class of the code.
inline int error_class_of(int rc) {
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  return error_class;
}

template <class T>
void expect_error_class(Checker& checker, const std::string& what, int rc, int expected, const SpaceBuffer<T>& buffer,
                        T unwritten) {
  const int error_class = error_class_of(rc);
  const std::vector<T> got = buffer.download();
  const bool untouched = std::all_of(got.begin(), got.end(), [&](T v) { return v == unwritten; });
  checker.check(error_class == expected && untouched, what + ": class " + std::to_string(error_class) + ", expected " +
                                                          std::to_string(expected) +
                                                          (untouched ? "" : ", buffer written"));
}

// One case of a bad-input table (tests/mpi/case_filter.h): run when the filter lets it, its checks
// beyond the base where the base MPI gets the case wrong (`base_defect`), then as above.
template <class T, class Call>
void expect_error_case(CaseFilter& filter, Checker& checker, const std::string& what, int expected,
                       const char* base_defect, Call&& call, const SpaceBuffer<T>& buffer, T unwritten) {
  if (!filter.run(what, base_defect)) return;
  Checker::BeyondBase beyond(checker, base_defect != nullptr);
  expect_error_class(checker, what, call(), expected, buffer, unwritten);
}

}  // namespace mcrp_test
