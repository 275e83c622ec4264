// Every blocking collective on device buffers, checked against the same call on host buffers (which
// the library sends to the base MPI untouched). Run once per path: `--path nccl` (default routing)
// and `--path mpi` (MCRPMPI_<COLLECTIVE>=mpi for all, i.e. the staged path). `--space device`
// (default) puts the device buffers in CUDA memory, `--space fake-device` in the library's fake
// device memory (MCRPMPI_FAKE_DEVICE=1: CPU CI, where the NCCL path falls back to staging unless a
// fake NCCL is loaded). Exits 77 (skipped) when the space cannot be had on every rank. Inputs are
// small integers, so sums are exact in any reduction order.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

int g_rank = 0, g_size = 1, g_failures = 0, g_passes = 0;
const bool g_trace = std::getenv("MCRPMPI_TEST_TRACE") != nullptr;  // name each case as it starts

struct Buffers {
  void* send;
  void* recv;
};

// A case runs its collective on the given buffers; sizes are bytes of each buffer.
struct Case {
  std::string name;
  std::size_t send_bytes;
  std::size_t recv_bytes;
  std::function<int(const Buffers&)> run;
  bool skip_check_on_rank0 = false;  // exscan leaves rank 0's result undefined
  // In-place reduce_scatter defines only the leading result block; the rest of the buffer is
  // scratch for the base MPI's algorithm and for NCCL alike, so only this many bytes are compared.
  std::size_t defined_bytes = SIZE_MAX;
};

void fill(std::vector<unsigned char>& bytes, int seed) {
  // Values are small integers whether read as int, float or double elements.
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = 0;
  const std::size_t floats = bytes.size() / sizeof(float);
  for (std::size_t i = 0; i < floats; ++i) {
    const float v = static_cast<float>((seed * 7 + i * 3) % 13);
    std::memcpy(&bytes[i * sizeof(float)], &v, sizeof v);
  }
}

void check(MemorySpace& space, const Case& c) {
  if (g_trace) std::fprintf(stderr, "[rank %d] %s\n", g_rank, c.name.c_str());
  std::vector<unsigned char> send(c.send_bytes + 1), recv_host(c.recv_bytes + 1);
  fill(send, g_rank + 1);
  fill(recv_host, 100 + g_rank);
  const SpaceBuffer<unsigned char> device_send(space, send), device_recv(space, recv_host);
  const int host_rc = c.run({send.data(), recv_host.data()});
  const int device_rc = c.run({device_send.data(), device_recv.data()});
  const std::vector<unsigned char> recv_device = device_recv.download();
  const std::size_t compared = std::min(c.defined_bytes, c.recv_bytes);
  const bool same = (c.skip_check_on_rank0 && g_rank == 0) ||
                    std::equal(recv_host.begin(), recv_host.begin() + compared, recv_device.begin());
  int ok = host_rc == MPI_SUCCESS && device_rc == MPI_SUCCESS && same ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok) {
    ++g_passes;
  } else {
    ++g_failures;
    if (!ok) std::printf("FAIL rank %d: %s (rc host %d device %d, results %s)\n", g_rank, c.name.c_str(), host_rc,
                         device_rc, same ? "equal" : "differ");
  }
}

std::vector<Case> cases(int n) {
  const int p = g_size, me = g_rank, last = p - 1;
  const std::size_t f = sizeof(float), d = sizeof(double);
  const std::string tag = " n=" + std::to_string(n);
  std::vector<int> counts(p), displs(p), stride_displs(p), pair_counts(p), pair_displs(p);
  for (int i = 0; i < p; ++i) {
    counts[i] = n + i;  // uneven
    displs[i] = i == 0 ? 0 : displs[i - 1] + counts[i - 1];
    stride_displs[i] = (p - 1 - i) * (n + p + 2);  // reversed, with gaps
    pair_counts[i] = n + me + i;  // alltoallv: what I send to i is what i expects from me
    pair_displs[i] = i == 0 ? 0 : pair_displs[i - 1] + pair_counts[i - 1];
  }
  // Fewer bytes in all than ranks: the mean per rank the routing agrees on must not round to "nothing
  // to move", which would hand the device pointers to the base MPI unstaged.
  // The char sent is a float's top byte (fill's bytes 0-2 of small values are zero); received at
  // displacement 0 (a one-rank allgatherv of the base MPI ignores displs).
  std::vector<int> first_only(p, 0), at_start(p, 0);
  first_only[0] = n > 0 ? 1 : 0;
  const int total = displs[p - 1] + counts[p - 1];
  const int pair_total = pair_displs[p - 1] + pair_counts[p - 1];
  const std::size_t gapped = static_cast<std::size_t>(p) * (n + p + 2);
  std::vector<Case> all;
  auto add = [&](std::string name, std::size_t s, std::size_t r, std::function<int(const Buffers&)> fn, bool skip0 = false,
                 std::size_t defined = SIZE_MAX) {
    all.push_back(Case{name + tag, s, r, std::move(fn), skip0, defined});
  };
  add("allreduce float sum", n * f, n * f, [=](const Buffers& b) { return MPI_Allreduce(b.send, b.recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
  add("allreduce in place int max", 0, n * f, [=](const Buffers& b) { return MPI_Allreduce(MPI_IN_PLACE, b.recv, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD); });
  add("allreduce double min (large count)", n * d, n * d, [=](const Buffers& b) { return MPI_Allreduce_c(b.send, b.recv, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD); });
  add("allreduce short sum (staged)", n * 2, n * 2, [=](const Buffers& b) { return MPI_Allreduce(b.send, b.recv, n, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD); });
  add("allreduce 2int minloc (staged)", n * 8, n * 8, [=](const Buffers& b) { return MPI_Allreduce(b.send, b.recv, n, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD); });
  // fp16: NCCL sums halves itself; a scan is staged, and the library swaps MPIX_C_FLOAT16 for its own
  // 2-byte type and half op there (the base MPICH aborts on fp16 reductions). The float fill pattern
  // read as halves gives small exact values (0 and numbers like 2.125).
  add("allreduce fp16 sum", n * 2, n * 2, [=](const Buffers& b) { return MPI_Allreduce(b.send, b.recv, n, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD); });
  add("scan fp16 max (staged)", n * 2, n * 2, [=](const Buffers& b) { return MPI_Scan(b.send, b.recv, n, MPIX_C_FLOAT16, MPI_MAX, MPI_COMM_WORLD); });
  add("reduce float sum root last", n * f, n * f, [=](const Buffers& b) { return MPI_Reduce(b.send, b.recv, n, MPI_FLOAT, MPI_SUM, last, MPI_COMM_WORLD); });
  add("reduce in place root 0", n * f, n * f, [=](const Buffers& b) { return MPI_Reduce(me == 0 ? MPI_IN_PLACE : b.send, b.recv, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); });
  add("bcast root last", 0, n * f, [=](const Buffers& b) { return MPI_Bcast(b.recv, n, MPI_FLOAT, last, MPI_COMM_WORLD); });
  add("allgather", n * f, p * n * f, [=](const Buffers& b) { return MPI_Allgather(b.send, n, MPI_FLOAT, b.recv, n, MPI_FLOAT, MPI_COMM_WORLD); });
  add("allgather in place", 0, p * n * f, [=](const Buffers& b) { return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.recv, n, MPI_FLOAT, MPI_COMM_WORLD); });
  add("allgatherv gapped", (n + p) * f, gapped * f, [=](const Buffers& b) { return MPI_Allgatherv(b.send, counts[me], MPI_FLOAT, b.recv, counts.data(), stride_displs.data(), MPI_FLOAT, MPI_COMM_WORLD); });
  add("allgatherv one char from rank 0", f, f, [=](const Buffers& b) { return MPI_Allgatherv(static_cast<const char*>(b.send) + 3, first_only[me], MPI_CHAR, b.recv, first_only.data(), at_start.data(), MPI_CHAR, MPI_COMM_WORLD); }, false, 1);
  add("alltoall", p * n * f, p * n * f, [=](const Buffers& b) { return MPI_Alltoall(b.send, n, MPI_FLOAT, b.recv, n, MPI_FLOAT, MPI_COMM_WORLD); });
  add("alltoall in place", 0, p * n * f, [=](const Buffers& b) { return MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.recv, n, MPI_FLOAT, MPI_COMM_WORLD); });
  add("alltoallv", pair_total * f, pair_total * f, [=](const Buffers& b) { return MPI_Alltoallv(b.send, pair_counts.data(), pair_displs.data(), MPI_FLOAT, b.recv, pair_counts.data(), pair_displs.data(), MPI_FLOAT, MPI_COMM_WORLD); });
  add("gather root last", n * f, p * n * f, [=](const Buffers& b) { return MPI_Gather(b.send, n, MPI_FLOAT, b.recv, n, MPI_FLOAT, last, MPI_COMM_WORLD); });
  add("gather in place root 0", n * f, p * n * f, [=](const Buffers& b) { return MPI_Gather(me == 0 ? MPI_IN_PLACE : b.send, n, MPI_FLOAT, b.recv, n, MPI_FLOAT, 0, MPI_COMM_WORLD); });
  add("gatherv", (n + p) * f, gapped * f, [=](const Buffers& b) { return MPI_Gatherv(b.send, counts[me], MPI_FLOAT, b.recv, counts.data(), stride_displs.data(), MPI_FLOAT, 0, MPI_COMM_WORLD); });
  add("scatter root last", p * n * f, n * f, [=](const Buffers& b) { return MPI_Scatter(b.send, n, MPI_FLOAT, b.recv, n, MPI_FLOAT, last, MPI_COMM_WORLD); });
  add("scatter in place root 0", p * n * f, n * f, [=](const Buffers& b) { return MPI_Scatter(b.send, n, MPI_FLOAT, me == 0 ? MPI_IN_PLACE : b.recv, n, MPI_FLOAT, 0, MPI_COMM_WORLD); });
  add("scatterv", gapped * f, (n + p) * f, [=](const Buffers& b) { return MPI_Scatterv(b.send, counts.data(), stride_displs.data(), MPI_FLOAT, b.recv, counts[me], MPI_FLOAT, 0, MPI_COMM_WORLD); });
  add("reduce_scatter uneven", total * f, (n + p) * f, [=](const Buffers& b) { return MPI_Reduce_scatter(b.send, b.recv, counts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
  add("reduce_scatter in place", 0, total * f, [=](const Buffers& b) { return MPI_Reduce_scatter(MPI_IN_PLACE, b.recv, counts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, false, counts[me] * f);
  add("reduce_scatter_block", p * n * f, n * f, [=](const Buffers& b) { return MPI_Reduce_scatter_block(b.send, b.recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
  add("reduce_scatter_block in place", 0, p * n * f, [=](const Buffers& b) { return MPI_Reduce_scatter_block(MPI_IN_PLACE, b.recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, false, n * f);
  add("scan", n * f, n * f, [=](const Buffers& b) { return MPI_Scan(b.send, b.recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
  add("exscan", n * f, n * f, [=](const Buffers& b) { return MPI_Exscan(b.send, b.recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, true);
  add("barrier", 0, 0, [](const Buffers&) { return MPI_Barrier(MPI_COMM_WORLD); });
  return all;
}

// A strided datatype on device buffers: NCCL's path packs it through host memory.
void check_strided_bcast(MemorySpace& space, int n) {
  MPI_Datatype every_other;
  MPI_Type_vector(n, 1, 2, MPI_FLOAT, &every_other);
  MPI_Type_commit(&every_other);
  check(space, Case{"bcast strided type n=" + std::to_string(n), 0, 2 * n * sizeof(float) + 4,
                    [=](const Buffers& b) { return MPI_Bcast(b.recv, 1, every_other, 0, MPI_COMM_WORLD); }});
  MPI_Type_free(&every_other);
}

struct Options {
  std::string path = "nccl";    // nccl: default routing; mpi: every collective forced onto staging
  std::string space = "device";  // where the device buffers live (tests/mpi/memory_spaces.h)
};

// `--path nccl|mpi` and `--space device|fake-device`, in any order; anything else is a usage error.
bool parse(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; i += 2) {
    const bool has_value = i + 1 < argc;
    if (has_value && std::strcmp(argv[i], "--path") == 0) {
      options->path = argv[i + 1];
    } else if (has_value && std::strcmp(argv[i], "--space") == 0) {
      options->space = argv[i + 1];
    } else {
      return false;
    }
  }
  return options->path == "nccl" || options->path == "mpi";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr, "usage: %s [--path nccl|mpi] [--space device|fake-device]\n", argv[0]);
    return 2;
  }
  if (options.path == "mpi") {
    for (const char* v : {"ALLREDUCE", "REDUCE", "BCAST", "ALLGATHER", "ALLGATHERV", "REDUCE_SCATTER",
                          "REDUCE_SCATTER_BLOCK", "ALLTOALL", "ALLTOALLV", "GATHER", "GATHERV", "SCATTER", "SCATTERV"}) {
      setenv((std::string("MCRPMPI_") + v).c_str(), "mpi", 1);
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const std::unique_ptr<MemorySpace> space = mcrp_test::make_memory_space(options.space, MPI_COMM_WORLD);
  if (space == nullptr) {
    MPI_Finalize();
    return mcrp_test::kSkipExitCode;
  }
  for (int n : {0, 1, 1000, 65539}) {
    for (const Case& c : cases(n)) check(*space, c);
    check_strided_bcast(*space, n);
  }
  if (g_rank == 0) {
    std::printf("%d passed, %d failed (%d ranks, path %s, %s memory)\n", g_passes, g_failures, g_size,
                options.path.c_str(), space->name());
  }
  MPI_Finalize();
  return g_failures == 0 ? 0 : 1;
}
