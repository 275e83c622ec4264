// Benchmark (not a test): nanoseconds per decide() call against a tuning table of realistic size
// (every collective, 4 communicator sizes x 2 topologies, 6 ranges each). Goal: <= ~100 ns.
//   ./bench_lookup [lookups]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tuning/table.h"

using namespace mcrp::tuning;

namespace {

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

Table realistic_table() {
  Table table;
  table.source = Source::tuning_file;
  table.origin = "bench";
  for (auto& rules : table.per_kind) {
    for (int size : {1, 8, 64, 512}) {
      for (Topology t : {Topology::single_node, Topology::multi_node}) {
        Rules r{size, t, {}};
        std::uint64_t lo = 0;
        for (int i = 0; i < 6; ++i) {
          const std::uint64_t hi = i == 5 ? kUnknownSize : (std::uint64_t{1024} << (3 * i));
          r.ranges.push_back(Range{lo, hi, i % 2 == 0 ? Backend::mpi : Backend::nccl});
          lo = hi;
        }
        rules.push_back(r);
      }
    }
  }
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  const long lookups = argc > 1 ? std::atol(argv[1]) : 20'000'000;
  install_table(realistic_table());
  load_settings();
  // Queries vary so the branch predictor cannot learn one path.
  std::vector<Query> queries;
  std::uint64_t seed = 12345;
  for (int i = 0; i < 4096; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    Query q;
    q.kind = static_cast<mcrp::CollKind>((seed >> 33) % mcrp::kCollKindCount);
    q.bytes = std::uint64_t{1} << ((seed >> 40) % 30);
    q.comm_size = 1 + static_cast<int>((seed >> 20) % 1024);
    q.topology = (seed >> 50) % 2 ? Topology::single_node : Topology::multi_node;
    queries.push_back(q);
  }
  unsigned sink = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_ns();
  for (long i = 0; i < lookups; ++i) sink += static_cast<unsigned>(decide(queries[i & 4095]).backend);
  const double cpu = thread_cpu_ns() - cpu_start;
  const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  // CPU time is the cost of a lookup; wall time also counts time the thread was not scheduled.
  std::printf("decide(): %.1f ns CPU (%.1f ns wall) per lookup over %ld lookups "
              "(table: %d collectives x 8 rules x 6 ranges; checksum %u)\n",
              cpu / static_cast<double>(lookups), wall / static_cast<double>(lookups), lookups, mcrp::kCollKindCount, sink);
  return 0;
}
