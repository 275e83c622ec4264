// What every collective check shares: the communicator it runs on, the case axes (count form, count,
// in-place, root), the job-wide checker, and the layouts of the vector (v) collectives.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/base_mpi_quirks.h"
#include "tests/mpi/check.h"
#include "tests/mpi/count_forms.h"
#include "tests/mpi/ops.h"
#include "tests/mpi/values.h"

namespace mcrp_test {

struct TestComm {
  MPI_Comm comm;
  std::string name;
  int rank;
  int size;
};

struct Case {
  CountForm form;
  MPI_Count count;
  bool in_place;
  int root;
};

// Which axes a collective varies besides form and count.
struct CaseAxes {
  bool in_place = false;
  bool rooted = false;
};

constexpr MPI_Count kCounts[] = {0, 1, 7, 1000};

struct Env {
  Checker& checker;
  const OpTable& ops;
  const TestComm& comm;
  const BaseMpiQuirks& quirks;

  // "allreduce[MPI_INT SUM] form=_c count=7 in-place root=0 comm=world(2/4)": names a failing call.
  std::string describe(const char* collective, const std::string& detail, const Case& c) const;
};

template <class Fn>
void for_each_case(const TestComm& tc, CaseAxes axes, Fn&& fn) {
  std::vector<int> roots{0};
  if (axes.rooted && tc.size > 1) roots.push_back(tc.size - 1);
  for (CountForm form : kCountForms)
    for (MPI_Count count : kCounts)
      for (bool in_place : {false, true}) {
        if (in_place && !axes.in_place) continue;
        for (int root : roots) fn(Case{form, count, in_place, root});
      }
}

// Blocks of a v-collective laid out in rank order with a one-element gap before each block and
// after the last, so writes outside a block show up as overwritten sentinels.
struct VLayout {
  Counts counts;
  Displs displs;
  MPI_Aint extent = 0;  // elements in the whole buffer
};
VLayout spaced_layout(const Counts& counts);

// `size` blocks of `count` elements back to back (the non-v collectives' layout), plus one trailing
// guard element.
VLayout contiguous_layout(MPI_Count count, int size);

// A case's two block layouts: equal blocks (the plain collectives) and varied, spaced blocks (the v-forms).
struct CaseLayouts {
  VLayout contiguous;
  VLayout spaced;
};
CaseLayouts layouts_for(const TestComm& tc, const Case& c);

// Per-rank counts for v-collectives: uneven, and zero for every third rank (from rank 1).
MPI_Count varied_count(MPI_Count count, int rank);
Counts varied_counts(MPI_Count count, int size);

// A buffer with `layout`'s blocks filled by value(block, i) and sentinels in the gaps.
template <class T, class ValueFn>
std::vector<T> fill_layout(const VLayout& layout, ValueFn value) {
  std::vector<T> buf(static_cast<size_t>(layout.extent), sentinel<T>());
  for (size_t b = 0; b < layout.counts.size(); ++b)
    for (MPI_Count i = 0; i < layout.counts[b]; ++i)
      buf[static_cast<size_t>(layout.displs[b] + i)] = value(static_cast<int>(b), i);
  return buf;
}

// Compares a whole buffer (blocks and gaps) with its reference.
template <class T>
void expect_buffer(const Env& env, const std::string& what, int rc, const std::vector<T>& got,
                   const std::vector<T>& expected) {
  if (got.size() != expected.size()) {
    env.checker.check(false, what + ": buffer size mismatch in the test itself");
    return;
  }
  env.checker.expect_equal(what, rc, got.data(), expected.data(), got.size());
}

void run_reductions(const Env& env);
void run_rooted_movement(const Env& env);  // bcast, gather(v), scatter(v)
void run_exchanges(const Env& env);        // allgather(v), alltoall(v)
void run_derived_types(const Env& env);    // non-contiguous and fp16 data
void run_barrier(const Env& env);
void run_bad_input(const Env& env);

}  // namespace mcrp_test
