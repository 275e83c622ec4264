// Bcast, Gather, Gatherv, Scatter, Scatterv on host buffers: every received block is compared with
// the values its sender computed, and gaps between v-blocks must keep their sentinels.
#include "tests/mpi/suite.h"

namespace mcrp_test {

namespace {

template <class T>
void check_bcast(const Env& env, const Case& c) {
  const TestComm& tc = env.comm;
  std::vector<T> expected = rank_values<T>(c.root, c.count);
  expected.push_back(sentinel<T>());
  std::vector<T> buf(expected.size(), sentinel<T>());
  if (tc.rank == c.root) buf = expected;
  const int rc = call::bcast(c.form, buf.data(), c.count, Mpi<T>::type(), c.root, tc.comm);
  expect_buffer(env, env.describe("bcast", Mpi<T>::name, c), rc, buf, expected);
}

// Gather and Gatherv: rank r sends layout.counts[r] elements into block r of the root's buffer.
template <class T, class Call>
void check_gather(const Env& env, const char* name, const Case& c, const VLayout& layout, Call call) {
  const TestComm& tc = env.comm;
  const bool at_root = tc.rank == c.root;
  const MPI_Count mine = layout.counts[tc.rank];
  std::vector<T> send(static_cast<size_t>(mine));
  for (MPI_Count i = 0; i < mine; ++i) send[i] = block_value<T>(tc.rank, c.root, i);
  const std::vector<T> expected =
      fill_layout<T>(layout, [&](int src, MPI_Count i) { return block_value<T>(src, c.root, i); });
  std::vector<T> recv;  // stays empty (a null pointer) off the root, where it is not significant
  const void* sendbuf = send.data();
  if (at_root) {
    recv.assign(expected.size(), sentinel<T>());
    if (c.in_place) {
      std::copy(send.begin(), send.end(), recv.begin() + layout.displs[tc.rank]);
      sendbuf = MPI_IN_PLACE;
    }
  }
  const int rc = call(sendbuf, mine, recv.data());
  const std::string what = env.describe(name, Mpi<T>::name, c);
  if (at_root) {
    expect_buffer(env, what, rc, recv, expected);
  } else {
    env.checker.check(rc == MPI_SUCCESS, what + ": returned error " + std::to_string(rc));
  }
}

// Scatter and Scatterv: the root sends block r of its buffer to rank r; its buffer stays intact.
template <class T, class Call>
void check_scatter(const Env& env, const char* name, const Case& c, const VLayout& layout, Call call) {
  const TestComm& tc = env.comm;
  const bool at_root = tc.rank == c.root;
  const MPI_Count mine = layout.counts[tc.rank];
  const std::vector<T> root_data =
      fill_layout<T>(layout, [&](int dst, MPI_Count i) { return block_value<T>(c.root, dst, i); });
  std::vector<T> send;  // stays empty (a null pointer) off the root, where it is not significant
  if (at_root) send = root_data;
  std::vector<T> recv(static_cast<size_t>(mine) + 1, sentinel<T>());
  std::vector<T> expected(recv.size(), sentinel<T>());
  for (MPI_Count i = 0; i < mine; ++i) expected[i] = block_value<T>(c.root, tc.rank, i);
  void* recvbuf = recv.data();
  if (at_root && c.in_place) {
    recvbuf = MPI_IN_PLACE;
    expected = recv;  // nothing may be written to the unused receive buffer
  }
  const std::string what = env.describe(name, Mpi<T>::name, c);
  const int rc = call(send.data(), recvbuf, mine);
  expect_buffer(env, what, rc, recv, expected);
  if (at_root) expect_buffer(env, what + " (root sendbuf unchanged)", MPI_SUCCESS, send, root_data);
}

template <class T>
void run_typed(const Env& env) {
  const TestComm& tc = env.comm;
  const MPI_Datatype t = Mpi<T>::type();
  for_each_case(tc, {true, true}, [&](const Case& c) {
    const CaseLayouts layouts = layouts_for(tc, c);
    const VLayout& contiguous = layouts.contiguous;
    const VLayout& spaced = layouts.spaced;
    check_gather<T>(env, "gather", c, contiguous, [&](const void* s, MPI_Count n, void* r) {
      return call::gather(c.form, s, n, t, r, c.count, t, c.root, tc.comm);
    });
    check_gather<T>(env, "gatherv", c, spaced, [&](const void* s, MPI_Count n, void* r) {
      return call::gatherv(c.form, s, n, t, r, spaced.counts, spaced.displs, t, c.root, tc.comm);
    });
    check_scatter<T>(env, "scatter", c, contiguous, [&](const void* s, void* r, MPI_Count n) {
      return call::scatter(c.form, s, c.count, t, r, n, t, c.root, tc.comm);
    });
    check_scatter<T>(env, "scatterv", c, spaced, [&](const void* s, void* r, MPI_Count n) {
      return call::scatterv(c.form, s, spaced.counts, spaced.displs, t, r, n, t, c.root, tc.comm);
    });
  });
}

}  // namespace

void run_rooted_movement(const Env& env) {
  for_each_type([&](auto tag) {
    for_each_case(env.comm, {false, true}, [&](const Case& c) { check_bcast<decltype(tag)>(env, c); });
  });
  for_each_width([&](auto tag) { run_typed<decltype(tag)>(env); });
}

}  // namespace mcrp_test
