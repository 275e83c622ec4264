#include "tuning/tune_p2p.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tuning/library_hooks.h"
#include "tuning/table.h"
#include "tuning/topology.h"

namespace mcrp::tuning {
namespace {

constexpr int kTag = 71;

// A duplicate of `pair` (world ranks 0 and 1; MPI_COMM_NULL elsewhere) asserted device-only whose
// engine has the eager limit `limit`: forced on both ranks while the duplicate is made (the engine
// reads it then), back to the table's at once. Collective over `world`.
class AssertedDuplicate {
 public:
  AssertedDuplicate(MPI_Comm pair, MPI_Comm world, std::uint64_t limit) {
    int mine = 1;
    if (pair != MPI_COMM_NULL) {
      const LibraryHooks& hooks = library_hooks();
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:device");
      const bool forced = hooks.force_p2p_eager_limit(static_cast<long long>(limit)) == 0;
      const int rc = MPI_Comm_dup_with_info(pair, info, &comm_);
      hooks.force_p2p_eager_limit(-1);
      MPI_Info_free(&info);
      mine = forced && rc == MPI_SUCCESS && hooks.p2p_engine_eager_limit(comm_) == static_cast<long long>(limit);
    }
    int all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, world);
    usable_ = all == 1;
  }
  ~AssertedDuplicate() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  AssertedDuplicate(const AssertedDuplicate&) = delete;
  AssertedDuplicate& operator=(const AssertedDuplicate&) = delete;
  MPI_Comm get() const { return comm_; }
  // True on every rank when every rank's duplicate has an engine with the limit asked for.
  bool usable() const { return usable_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool usable_ = false;
};

// Ranks 0 and 1 of `comm` send `bytes` back and forth; returns rank 0's half mean round trip in
// microseconds (0 on other ranks, which return at once, and without timed iterations), negative
// when a call failed on 0 or 1.
double ping_pong(MPI_Comm comm, int rank, char* buffer, std::uint64_t bytes, int warmup, int iterations) {
  if (rank > 1) return 0;
  const int count = static_cast<int>(bytes);
  const int peer = 1 - rank;
  int failed = 0;
  double start = PMPI_Wtime();
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) start = PMPI_Wtime();
    if (rank == 0) {
      failed |= MPI_Send(buffer, count, MPI_BYTE, peer, kTag, comm);
      failed |= MPI_Recv(buffer, count, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
    } else {
      failed |= MPI_Recv(buffer, count, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
      failed |= MPI_Send(buffer, count, MPI_BYTE, peer, kTag, comm);
    }
  }
  if (failed != MPI_SUCCESS) return -1;
  return iterations > 0 ? (PMPI_Wtime() - start) * 1e6 / (2.0 * iterations) : 0;
}

// One round of ping_pong agreed over `world` (ranks 2.. only agree): rank 0's time, negative when
// the round failed on rank 0 or 1, the same on every rank, so that every rank repeats alike.
double agreed_ping_pong(MPI_Comm world, MPI_Comm comm, int rank, char* buffer, std::uint64_t bytes, int warmup,
                        int iterations) {
  const double us = ping_pong(comm, rank, buffer, bytes, warmup, iterations);
  // {failed, rank 0's time} in one reduction: MAX of the flags, and of rank 0's time against -1s.
  double mine[2] = {us < 0 ? 1.0 : 0.0, rank == 0 ? us : -1.0}, agreed[2] = {0, 0};
  PMPI_Allreduce(mine, agreed, 2, MPI_DOUBLE, MPI_MAX, world);
  return agreed[0] > 0 ? -1 : agreed[1];
}

// World ranks 0 and 1 (MPI_COMM_NULL on the others), collective over `world`.
class Pair {
 public:
  Pair(MPI_Comm world, int rank) {
    MPI_Comm_split(world, rank < 2 ? 0 : MPI_UNDEFINED, rank, &comm_);
    if (comm_ != MPI_COMM_NULL) topology_ = classify_topology(comm_);
  }
  ~Pair() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  MPI_Comm get() const { return comm_; }
  Topology topology() const { return topology_; }  // where the two live (`any` on other ranks)

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  Topology topology_ = Topology::any;
};

// Every rank holds the same sizes, so every rank takes the same branches.
std::vector<std::uint64_t> eager_sizes(const TuneOptions& options) {
  return doubling_sizes(options.min_bytes, std::min<std::uint64_t>(options.max_bytes, kMaxP2pEagerLimitBytes));
}

// No rows, after rank 0 said why.
std::vector<EagerMeasurement> skipped(int rank, const char* why) {
  if (rank == 0) std::printf("p2p eager limit: skipped (%s)\n", why);
  return {};
}

}  // namespace

std::vector<EagerMeasurement> measure_eager_limit(MPI_Comm world, const TuneOptions& options, DeviceMemory memory) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  const std::vector<std::uint64_t> sizes = eager_sizes(options);
  const LibraryHooks& hooks = library_hooks();
  if (size < 2) return skipped(rank, "one rank: no pair to measure");
  if (sizes.empty()) return skipped(rank, "--min-bytes is above 1 GiB, the largest eager limit");
  if (hooks.force_p2p_eager_limit == nullptr || hooks.p2p_engine_eager_limit == nullptr) {
    return skipped(rank, "this libmcrpmpi cannot force the eager limit");
  }
  // On a pair rather than the world: an engine's NCCL communicator is set up by library progress on
  // every member, and the waiting ranks make none.
  const Pair pair(world, rank);
  const Topology topology = pair.topology();
  // Protocol order as in P2pProtocol: inline (every measured size fits), rendezvous (limit 0).
  const AssertedDuplicate inline_comm(pair.get(), world, sizes.back()), rendezvous_comm(pair.get(), world, 0);
  if (!inline_comm.usable() || !rendezvous_comm.usable()) {
    return skipped(rank, "the asserted communicator of world ranks 0 and 1 got no device-only engine: NCCL is not "
                         "usable on both (on the fake device, set MCRPMPI_P2P_CHANNEL=nccl)");
  }
  const DeviceBuffer buffer(memory, rank < 2 ? sizes.back() : 0);
  int ok = buffer.get() != nullptr, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  if (!all_ok) return skipped(rank, "not enough device memory");
  const MPI_Comm comms[2] = {inline_comm.get(), rendezvous_comm.get()};
  // One untimed round trip each, so that the channel's NCCL set-up (which the first rendezvous waits for)
  // is not timed even with --warmup 0; a failure shows again in the measurements.
  for (MPI_Comm comm : comms) ping_pong(comm, rank, buffer.get(), sizes.front(), 1, 0);
  std::vector<EagerMeasurement> rows;
  for (std::size_t step = 0; step < sizes.size(); ++step) {
    const std::uint64_t bytes = sizes[step];
    const int iterations = iterations_for(bytes, options.iterations);
    const PairTiming timing = time_pair([&](int p) {
      return agreed_ping_pong(world, comms[p], rank, buffer.get(), bytes, options.warmup, iterations);
    }, options.repeat);
    const bool any_failed = timing.latency_us[0] < 0 || timing.latency_us[1] < 0;
    if (rank != 0) continue;
    if (!any_failed) {
      for (int p = 0; p < 2; ++p) {
        rows.push_back(EagerMeasurement{2, topology, bytes, static_cast<P2pProtocol>(p), timing.latency_us[p], iterations});
        report_row(options, rank, rows.back());
      }
    }
    std::printf("[p2p %zu/%zu] eager limit, world ranks 0-1, %s, %s: inline %.1f us, rendezvous %.1f us%s%s\n", step + 1,
                sizes.size(), topology_name(topology), human_bytes(bytes).c_str(), timing.latency_us[0],
                timing.latency_us[1], rounds_note(timing).c_str(), any_failed ? " (failed: not used)" : "");
    std::fflush(stdout);
  }
  return rows;
}

}  // namespace mcrp::tuning
