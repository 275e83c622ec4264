#include "tests/mpi/suite.h"

namespace mcrp_test {

std::string Env::describe(const char* collective, const std::string& detail, const Case& c) const {
  std::string out = std::string(collective) + "[" + detail + "] form=" + form_name(c.form) +
                    " count=" + std::to_string(c.count);
  if (c.in_place) out += " in-place";
  out += " root=" + std::to_string(c.root) + " comm=" + comm.name + "(" + std::to_string(comm.rank) + "/" +
         std::to_string(comm.size) + ")";
  return out;
}

VLayout spaced_layout(const Counts& counts) {
  VLayout layout;
  layout.counts = counts;
  MPI_Aint next = 1;  // gap before the first block
  for (MPI_Count n : counts) {
    layout.displs.push_back(next);
    next += n + 1;
  }
  layout.extent = next;
  return layout;
}

VLayout contiguous_layout(MPI_Count count, int size) {
  VLayout layout;
  for (int r = 0; r < size; ++r) {
    layout.counts.push_back(count);
    layout.displs.push_back(r * count);
  }
  layout.extent = size * count + 1;
  return layout;
}

CaseLayouts layouts_for(const TestComm& tc, const Case& c) {
  return {contiguous_layout(c.count, tc.size), spaced_layout(varied_counts(c.count, tc.size))};
}

MPI_Count varied_count(MPI_Count count, int rank) {
  if (count == 0 || rank % 3 == 1) return 0;
  return count + rank;
}

Counts varied_counts(MPI_Count count, int size) {
  Counts counts;
  for (int r = 0; r < size; ++r) counts.push_back(varied_count(count, r));
  return counts;
}

}  // namespace mcrp_test
