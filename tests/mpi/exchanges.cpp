// Allgather, Allgatherv, Alltoall, Alltoallv on host buffers, in place and not: every block a rank
// receives is compared with what its sender computed, and gaps between v-blocks keep their sentinels.
#include "tests/mpi/suite.h"

namespace mcrp_test {

namespace {

// Alltoallv block sizes: symmetric in (a, b), as an in-place alltoallv requires, uneven, some zero.
MPI_Count pair_count(MPI_Count count, int a, int b) {
  if (count == 0 || (a + b) % 4 == 3) return 0;
  return count + (a + b) % 3;
}

// Allgather and Allgatherv: block r of every rank's buffer holds rank r's values.
template <class T, class Call>
void check_allgather(const Env& env, const char* name, const Case& c, const VLayout& layout, Call call) {
  const int rank = env.comm.rank;
  const bool base_ignores_displs = env.quirks.single_rank_allgatherv_ignores_displs && env.comm.size == 1 &&
                                   !c.in_place && layout.displs[0] != 0;
  if (base_ignores_displs && !env.quirks.library_present) {
    env.checker.skip("allgatherv on a 1-rank communicator with displs[0] != 0: the base MPI ignores displs");
    return;
  }
  const Checker::BeyondBase beyond(env.checker, base_ignores_displs);  // the library places the block
  const std::vector<T> send = rank_values<T>(rank, layout.counts[rank]);
  const std::vector<T> expected = fill_layout<T>(layout, value_of<T>);
  std::vector<T> recv(expected.size(), sentinel<T>());
  const void* sendbuf = send.data();
  if (c.in_place) {
    std::copy(send.begin(), send.end(), recv.begin() + layout.displs[rank]);
    sendbuf = MPI_IN_PLACE;
  }
  // In place, MPI ignores the send count and type: pass what callers often pass, 0 and NULL.
  const MPI_Count sendcount = c.in_place ? 0 : layout.counts[rank];
  const MPI_Datatype sendtype = c.in_place ? MPI_DATATYPE_NULL : Mpi<T>::type();
  const int rc = call(sendbuf, sendcount, sendtype, recv.data());
  expect_buffer(env, env.describe(name, Mpi<T>::name, c), rc, recv, expected);
}

// Alltoall and Alltoallv: block d of rank s's send buffer lands in block s of rank d's receive buffer.
// `layout` is this rank's layout for both buffers (the block sizes are symmetric).
template <class T, class Call>
void check_alltoall(const Env& env, const char* name, const Case& c, const VLayout& layout, Call call) {
  const int rank = env.comm.rank;
  const std::vector<T> send =
      fill_layout<T>(layout, [&](int dst, MPI_Count i) { return block_value<T>(rank, dst, i); });
  const std::vector<T> expected =
      fill_layout<T>(layout, [&](int src, MPI_Count i) { return block_value<T>(src, rank, i); });
  std::vector<T> recv(expected.size(), sentinel<T>());
  const void* sendbuf = send.data();
  if (c.in_place) {
    recv = send;
    sendbuf = MPI_IN_PLACE;
  }
  const int rc = call(sendbuf, recv.data());
  expect_buffer(env, env.describe(name, Mpi<T>::name, c), rc, recv, expected);
}

template <class T>
void run_typed(const Env& env) {
  const TestComm& tc = env.comm;
  const MPI_Datatype t = Mpi<T>::type();
  for_each_case(tc, {true, false}, [&](const Case& c) {
    const CaseLayouts layouts = layouts_for(tc, c);
    const VLayout& contiguous = layouts.contiguous;
    const VLayout& spaced = layouts.spaced;
    check_allgather<T>(env, "allgather", c, contiguous,
                       [&](const void* s, MPI_Count sn, MPI_Datatype st, void* r) {
                         return call::allgather(c.form, s, sn, st, r, c.count, t, tc.comm);
                       });
    check_allgather<T>(env, "allgatherv", c, spaced, [&](const void* s, MPI_Count sn, MPI_Datatype st, void* r) {
      return call::allgatherv(c.form, s, sn, st, r, spaced.counts, spaced.displs, t, tc.comm);
    });

    check_alltoall<T>(env, "alltoall", c, contiguous, [&](const void* s, void* r) {
      const MPI_Count sendcount = c.in_place ? 0 : c.count;
      return call::alltoall(c.form, s, sendcount, c.in_place ? MPI_DATATYPE_NULL : t, r, c.count, t, tc.comm);
    });
    Counts pairs;
    for (int peer = 0; peer < tc.size; ++peer) pairs.push_back(pair_count(c.count, tc.rank, peer));
    const VLayout paired = spaced_layout(pairs);
    check_alltoall<T>(env, "alltoallv", c, paired, [&](const void* s, void* r) {
      return call::alltoallv(c.form, s, paired.counts, paired.displs, t, r, paired.counts, paired.displs, t,
                             tc.comm);
    });
  });
}

}  // namespace

void run_exchanges(const Env& env) {
  for_each_width([&](auto tag) { run_typed<decltype(tag)>(env); });
}

}  // namespace mcrp_test
