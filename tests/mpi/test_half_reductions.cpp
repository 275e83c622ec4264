// fp16 (MPIX_C_FLOAT16) reductions on host buffers through the library. Plain MPICH 4.0.2 aborts on
// every one of these (typerep_yaksa_pack.c); the library substitutes a 2-byte type and its own
// half-precision ops (collectives/half_reduction.h). Inputs are small integers, exact in fp16, so
// the references are exact whatever the reduction order.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/half_float.h"
#include "tests/mpi/check.h"

namespace {

using Halves = std::vector<std::uint16_t>;
mcrp_test::Checker g_check;
int g_rank = 0, g_size = 1;

float input(int rank, int i) { return static_cast<float>((rank * 3 + i) % 7); }

Halves halves_of(int rank, int n) {
  Halves h(n);
  for (int i = 0; i < n; ++i) h[i] = mcrp::float_to_half(input(rank, i));
  return h;
}

// The reduction of ranks [first, last) element by element, as halves.
Halves reference(MPI_Op op, int first, int last, int offset, int n) {
  Halves out(n);
  for (int i = 0; i < n; ++i) {
    float acc = input(first, offset + i);
    for (int r = first + 1; r < last; ++r) {
      const float v = input(r, offset + i);
      acc = op == MPI_SUM ? acc + v : op == MPI_PROD ? acc * v : op == MPI_MAX ? std::max(acc, v) : std::min(acc, v);
    }
    out[i] = mcrp::float_to_half(acc);
  }
  return out;
}

void expect(const std::string& what, int rc, const Halves& got, const Halves& want) {
  g_check.expect_equal(what, rc, got.data(), want.data(), want.size());
}

void run(MPI_Op op, const char* op_name, int n, bool large) {
  const std::string tag = std::string(op_name) + " n=" + std::to_string(n) + (large ? " _c" : "");
  const Halves mine = halves_of(g_rank, n);
  Halves out(n, 0xffff);
  int rc = large ? MPI_Allreduce_c(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD)
                 : MPI_Allreduce(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  expect("allreduce " + tag, rc, out, reference(op, 0, g_size, 0, n));

  Halves in_place = mine;
  rc = MPI_Allreduce(MPI_IN_PLACE, in_place.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  expect("allreduce in place " + tag, rc, in_place, reference(op, 0, g_size, 0, n));

  const int root = g_size - 1;
  out.assign(n, 0xffff);
  rc = large ? MPI_Reduce_c(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, root, MPI_COMM_WORLD)
             : MPI_Reduce(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, root, MPI_COMM_WORLD);
  if (g_rank == root) expect("reduce " + tag, rc, out, reference(op, 0, g_size, 0, n));

  out.assign(n, 0xffff);
  rc = MPI_Scan(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  expect("scan " + tag, rc, out, reference(op, 0, g_rank + 1, 0, n));

  out.assign(n, 0xffff);
  rc = MPI_Exscan(mine.data(), out.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  if (g_rank > 0) expect("exscan " + tag, rc, out, reference(op, 0, g_rank, 0, n));

  // Reduce-scatter: every rank contributes size*n elements, rank r keeps block r.
  const Halves contribution = halves_of(g_rank, n * g_size);
  out.assign(n, 0xffff);
  rc = MPI_Reduce_scatter_block(contribution.data(), out.data(), n, MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  expect("reduce_scatter_block " + tag, rc, out, reference(op, 0, g_size, g_rank * n, n));
  const std::vector<int> counts(g_size, n);
  out.assign(n, 0xffff);
  rc = MPI_Reduce_scatter(contribution.data(), out.data(), counts.data(), MPIX_C_FLOAT16, op, MPI_COMM_WORLD);
  expect("reduce_scatter " + tag, rc, out, reference(op, 0, g_size, g_rank * n, n));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const struct { MPI_Op op; const char* name; } ops[] = {{MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MAX, "max"}, {MPI_MIN, "min"}};
  for (const auto& o : ops) {
    for (int n : {0, 1, 7, 1000}) {
      for (bool large : {false, true}) run(o.op, o.name, n, large);
    }
  }
  const int rc = g_check.finish(MPI_COMM_WORLD, "test_half_reductions");
  MPI_Finalize();
  return rc;
}
