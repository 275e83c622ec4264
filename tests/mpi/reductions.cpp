// Allreduce, Reduce, Reduce_scatter, Reduce_scatter_block, Scan, Exscan (and MINLOC on
// MPI_DOUBLE_INT) on host buffers, against references folded locally over the ranks' inputs.
#include <numeric>

#include "tests/mpi/suite.h"

namespace mcrp_test {

namespace {

template <class T>
std::string detail(OpKind op) {
  return std::string(Mpi<T>::name) + " " + op_name(op);
}

// The reference followed by one sentinel: the element past the result must stay untouched.
template <class T>
std::vector<T> guarded(std::vector<T> v) {
  v.push_back(sentinel<T>());
  return v;
}

// Where a reduction's result lands on this rank, and over which ranks it reduces.
struct Reach {
  bool has_result;  // false: recvbuf is not significant here (reduce off root, exscan on rank 0)
  bool in_place;    // this rank passes MPI_IN_PLACE (reduce: root only)
  int first, last;  // ranks reduced into this rank's result
};

// Collectives whose result is the element-wise reduction of each rank's whole input.
template <class T, class Call>
void check_whole_reduction(const Env& env, const char* name, OpKind op, const Case& c, Reach reach, Call call) {
  const std::vector<T> input = rank_values<T>(env.comm.rank, c.count);
  std::vector<T> send = input;
  std::vector<T> recv(static_cast<size_t>(c.count) + 1, sentinel<T>());
  const void* sendbuf = send.data();
  if (reach.in_place) {
    std::copy(input.begin(), input.end(), recv.begin());
    sendbuf = MPI_IN_PLACE;
  }
  const std::string what = env.describe(name, detail<T>(op), c);
  const int rc = call(sendbuf, recv.data(), env.ops.get(op));
  if (reach.has_result) {
    expect_buffer(env, what, rc, recv, guarded(fold_ranks<T>(op, reach.first, reach.last, 0, c.count, value_of<T>)));
  } else {
    env.checker.check(rc == MPI_SUCCESS, what + ": returned error " + std::to_string(rc));
  }
  if (!reach.in_place) expect_buffer(env, what + " (sendbuf unchanged)", MPI_SUCCESS, send, input);
}

// Reduce_scatter and Reduce_scatter_block: rank r gets block r of the reduction of everyone's input.
template <class T, class Call>
void check_scattered_reduction(const Env& env, const char* name, OpKind op, const Case& c, const Counts& counts,
                               Call call) {
  const int rank = env.comm.rank;
  const MPI_Count total = std::accumulate(counts.begin(), counts.end(), MPI_Count{0});
  const MPI_Count offset = std::accumulate(counts.begin(), counts.begin() + rank, MPI_Count{0});
  const MPI_Count mine = counts[rank];
  const std::vector<T> input = rank_values<T>(rank, total);
  std::vector<T> send = input;
  std::vector<T> recv(static_cast<size_t>(mine) + 1, sentinel<T>());
  const void* sendbuf = send.data();
  if (c.in_place) {
    recv = input;  // the whole input goes in recvbuf; the result lands at its start
    sendbuf = MPI_IN_PLACE;
  }
  const int rc = call(sendbuf, recv.data(), env.ops.get(op));
  std::vector<T> expected = fold_ranks<T>(op, 0, env.comm.size - 1, offset, mine, value_of<T>);
  if (c.in_place) {
    recv.resize(static_cast<size_t>(mine));  // MPI leaves the rest of an in-place buffer undefined
  } else {
    expected = guarded(expected);
  }
  expect_buffer(env, env.describe(name, detail<T>(op), c), rc, recv, expected);
}

template <class T>
void run_allreduce(const Env& env, OpKind op) {
  const TestComm& tc = env.comm;
  for_each_case(tc, {true, false}, [&](const Case& c) {
    check_whole_reduction<T>(env, "allreduce", op, c, {true, c.in_place, 0, tc.size - 1},
                             [&](const void* s, void* r, MPI_Op o) {
                               return call::allreduce(c.form, s, r, c.count, Mpi<T>::type(), o, tc.comm);
                             });
  });
}

template <class T>
void run_other_reductions(const Env& env, OpKind op) {
  const TestComm& tc = env.comm;
  const MPI_Datatype type = Mpi<T>::type();
  for_each_case(tc, {true, false}, [&](const Case& c) {
    check_whole_reduction<T>(env, "scan", op, c, {true, c.in_place, 0, tc.rank},
                             [&](const void* s, void* r, MPI_Op o) {
                               return call::scan(c.form, s, r, c.count, type, o, tc.comm);
                             });
    check_whole_reduction<T>(env, "exscan", op, c, {tc.rank > 0, c.in_place, 0, tc.rank - 1},
                             [&](const void* s, void* r, MPI_Op o) {
                               return call::exscan(c.form, s, r, c.count, type, o, tc.comm);
                             });
    const Counts varied = varied_counts(c.count, tc.size);
    check_scattered_reduction<T>(env, "reduce_scatter", op, c, varied, [&](const void* s, void* r, MPI_Op o) {
      return call::reduce_scatter(c.form, s, r, varied, type, o, tc.comm);
    });
    check_scattered_reduction<T>(env, "reduce_scatter_block", op, c, Counts(tc.size, c.count),
                                 [&](const void* s, void* r, MPI_Op o) {
                                   return call::reduce_scatter_block(c.form, s, r, c.count, type, o, tc.comm);
                                 });
  });
  for_each_case(tc, {true, true}, [&](const Case& c) {
    const bool base_crashes = env.quirks.inplace_reduce_at_nonzero_root_crashes && c.in_place && c.root != 0 &&
                              c.count * static_cast<MPI_Count>(sizeof(T)) > BaseMpiQuirks::kInplaceReduceSafeBytes;
    if (base_crashes && !env.quirks.library_present) {
      env.checker.skip("reduce in place at a nonzero root over 2 KiB: crashes in the base MPI (MPICH 4.0)");
      return;
    }
    const Checker::BeyondBase beyond(env.checker, base_crashes);
    const bool at_root = tc.rank == c.root;
    check_whole_reduction<T>(env, "reduce", op, c, {at_root, at_root && c.in_place, 0, tc.size - 1},
                             [&](const void* s, void* r, MPI_Op o) {
                               return call::reduce(c.form, s, r, c.count, type, o, c.root, tc.comm);
                             });
  });
}

// Large uneven blocks in place: MPICH 4.0.2 alone aborts here (base_mpi_quirks.h); the library
// must not, since its staged path hands such calls to the base MPI.
void run_large_in_place_reduce_scatter(const Env& env) {
  const TestComm& tc = env.comm;
  if (env.quirks.inplace_reduce_scatter_large_aborts && !env.quirks.library_present) {
    env.checker.skip("reduce_scatter in place with large uneven blocks: aborts in the base MPI (MPICH 4.0)");
    return;
  }
  const Checker::BeyondBase beyond(env.checker, env.quirks.inplace_reduce_scatter_large_aborts);
  const Case c{CountForm::narrow, BaseMpiQuirks::kLargeReduceScatterBlock, true, 0};
  Counts uneven;  // every block non-empty: an empty one (as in varied_counts) does not trigger it
  for (int r = 0; r < tc.size; ++r) uneven.push_back(c.count + r);
  check_scattered_reduction<int>(env, "reduce_scatter", OpKind::sum, c, uneven, [&](const void* s, void* r, MPI_Op o) {
    return call::reduce_scatter(c.form, s, r, uneven, MPI_INT, o, tc.comm);
  });
}

// MINLOC on (value, index) pairs with many ties: the lowest value wins, then the lowest index.
DoubleInt minloc_input(int rank, MPI_Count i) {
  return {static_cast<double>((i * 7 + rank * 5) % 3), rank * 100 + static_cast<int>(i % 7)};
}

DoubleInt minloc_combine(DoubleInt a, DoubleInt b) {
  if (b.value < a.value || (b.value == a.value && b.index < a.index)) return b;
  return a;
}

void run_minloc(const Env& env) {
  const TestComm& tc = env.comm;
  for_each_case(tc, {true, false}, [&](const Case& c) {
    std::vector<DoubleInt> send(static_cast<size_t>(c.count)), expected(send.size());
    for (MPI_Count i = 0; i < c.count; ++i) {
      send[i] = minloc_input(tc.rank, i);
      expected[i] = minloc_input(0, i);
      for (int r = 1; r < tc.size; ++r) expected[i] = minloc_combine(expected[i], minloc_input(r, i));
    }
    std::vector<DoubleInt> recv(send.size(), DoubleInt{-1.0, -1});
    const void* sendbuf = send.data();
    if (c.in_place) {
      recv = send;
      sendbuf = MPI_IN_PLACE;
    }
    const int rc = call::allreduce(c.form, sendbuf, recv.data(), c.count, MPI_DOUBLE_INT, MPI_MINLOC, tc.comm);
    expect_buffer(env, env.describe("allreduce", "MPI_DOUBLE_INT MINLOC", c), rc, recv, expected);
  });
}

}  // namespace

void run_reductions(const Env& env) {
  // Allreduce (the hot path of Horovod and mpi4py users) gets every type and operator.
  for_each_type([&](auto tag) {
    using T = decltype(tag);
    for (OpKind op : ops_for<T>()) run_allreduce<T>(env, op);
  });
  // The other reductions get a smaller matrix, to keep a 4-rank run on 2 cores short: a built-in
  // and the non-commutative user operator on int, and a built-in on double.
  run_other_reductions<int>(env, OpKind::sum);
  run_other_reductions<int>(env, OpKind::user_first);
  run_other_reductions<double>(env, OpKind::max);
  run_minloc(env);
  run_large_in_place_reduce_scatter(env);
}

}  // namespace mcrp_test
