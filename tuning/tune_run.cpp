#include "tuning/tune_run.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tuning/library_hooks.h"
#include "tuning/table.h"
#include "tuning/topology.h"

namespace mcrp::tuning {
namespace {

struct SubComm {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL on ranks outside it
  bool owned = false;
};

// Per-rank block `bytes` means: count x type size of the count argument (allreduce's count, one
// rank's block of allgather/gather/scatter/reduce_scatter_block, one peer's block of alltoall).
// Reductions use floats, so sizes round down to whole floats.
int call_collective(CollKind kind, char* send, char* recv, std::uint64_t bytes, MPI_Comm comm) {
  const int floats = static_cast<int>(bytes / sizeof(float));
  const int n = static_cast<int>(bytes);
  switch (kind) {
    case CollKind::allreduce: return MPI_Allreduce(send, recv, floats, MPI_FLOAT, MPI_SUM, comm);
    case CollKind::reduce: return MPI_Reduce(send, recv, floats, MPI_FLOAT, MPI_SUM, 0, comm);
    case CollKind::bcast: return MPI_Bcast(recv, n, MPI_BYTE, 0, comm);
    case CollKind::allgather: return MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm);
    case CollKind::reduce_scatter_block:
      return MPI_Reduce_scatter_block(send, recv, floats, MPI_FLOAT, MPI_SUM, comm);
    case CollKind::alltoall: return MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm);
    case CollKind::gather: return MPI_Gather(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, comm);
    case CollKind::scatter: return MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, 0, comm);
    case CollKind::scan: return MPI_Scan(send, recv, floats, MPI_FLOAT, MPI_SUM, comm);
    default: return MPI_ERR_OTHER;
  }
}

std::vector<SubComm> communicators(MPI_Comm world, bool sub_communicators) {
  std::vector<SubComm> comms{{world, false}};
  if (!sub_communicators) return comms;
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  MPI_Comm node = MPI_COMM_NULL;
  PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  // One node communicator per node; every node measures its own, rank 0's is the one reported.
  int node_size = 0;
  PMPI_Comm_size(node, &node_size);
  int smallest_node = 0;
  PMPI_Allreduce(&node_size, &smallest_node, 1, MPI_INT, MPI_MIN, world);
  if (smallest_node < size && smallest_node > 1) comms.push_back({node, true});
  else PMPI_Comm_free(&node);
  for (int p = 2; p < size; p *= 2) {
    MPI_Comm sub = MPI_COMM_NULL;
    PMPI_Comm_split(world, rank < p ? 0 : MPI_UNDEFINED, rank, &sub);
    comms.push_back({sub, sub != MPI_COMM_NULL});
  }
  return comms;
}

}  // namespace

bool needs_per_rank_blocks(CollKind kind) {
  return kind == CollKind::allgather || kind == CollKind::alltoall || kind == CollKind::gather ||
         kind == CollKind::scatter || kind == CollKind::reduce_scatter_block;
}

double time_collective(CollKind kind, DeviceBuffer& send, DeviceBuffer& recv, std::uint64_t bytes, MPI_Comm comm,
                       int warmup, int iterations, DeviceMemory memory) {
  int failed = 0;
  for (int i = 0; i < warmup; ++i) failed |= call_collective(kind, send.get(), recv.get(), bytes, comm) != MPI_SUCCESS;
  PMPI_Barrier(comm);
  const double start = PMPI_Wtime();
  for (int i = 0; i < iterations; ++i) failed |= call_collective(kind, send.get(), recv.get(), bytes, comm) != MPI_SUCCESS;
  synchronize(memory);
  double mine = failed ? -1e300 : (PMPI_Wtime() - start) * 1e6 / iterations, slowest = 0;
  PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  int any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
  return any_failed ? -1 : slowest;
}

std::string rounds_note(const PairTiming& timing) {
  return timing.rounds > 1 ? " (medians of " + std::to_string(timing.rounds) + " rounds)" : std::string();
}

bool libmcrpmpi_loaded() { return library_hooks().force_backend != nullptr; }

int iterations_for(std::uint64_t bytes, int iterations) {
  const std::uint64_t budget = 1ull << 30;
  const std::uint64_t fit = bytes == 0 ? iterations : budget / bytes;
  return static_cast<int>(std::max<std::uint64_t>(3, std::min<std::uint64_t>(iterations, fit)));
}

std::vector<std::uint64_t> doubling_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = std::max<std::uint64_t>(min_bytes, 1); b <= max_bytes; b *= 2) sizes.push_back(b);
  return sizes;
}

std::string human_bytes(std::uint64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) bytes /= 1024, ++u;
  return std::to_string(bytes) + " " + unit[u];
}

std::vector<CollKind> measurable_kinds() {
  return {CollKind::allreduce, CollKind::reduce,   CollKind::bcast,  CollKind::allgather,
          CollKind::reduce_scatter_block, CollKind::alltoall, CollKind::gather, CollKind::scatter,
          CollKind::scan};
}

std::vector<Measurement> run_measurements(MPI_Comm world, const TuneOptions& options, DeviceMemory memory) {
  const std::vector<CollKind>& kinds = options.kinds;
  const auto force = library_hooks().force_backend;
  if (kinds.empty()) return {};
  const std::vector<std::uint64_t> sizes = doubling_sizes(options.min_bytes, options.max_bytes);
  int world_rank = 0;
  PMPI_Comm_rank(world, &world_rank);
  std::vector<SubComm> comms = communicators(world, options.sub_communicators);
  const std::size_t steps = comms.size() * kinds.size() * sizes.size();
  std::size_t done = 0;
  const double started = PMPI_Wtime();
  std::vector<Measurement> results;
  for (SubComm& sub : comms) {
    if (sub.comm != MPI_COMM_NULL) {
      int size = 0;
      PMPI_Comm_size(sub.comm, &size);
      const Topology topology = classify_topology(sub.comm);
      // Rooted and gathering collectives need size x block on some ranks; cap total device memory.
      const std::uint64_t largest = options.max_bytes * static_cast<std::uint64_t>(size);
      DeviceBuffer send(memory, largest), recv(memory, largest);
      int ok = send.get() != nullptr && recv.get() != nullptr, all_ok = 0;
      PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, sub.comm);
      for (CollKind kind : kinds) {
        for (std::uint64_t bytes : sizes) {
          ++done;
          if (!all_ok) continue;
          const int iterations = iterations_for(bytes * (needs_per_rank_blocks(kind) ? size : 1), options.iterations);
          // The timer agrees on the slowest rank's time, so every rank repeats a close point alike.
          const PairTiming timing = time_pair([&](int b) {
            force(static_cast<int>(kind), b);
            return time_collective(kind, send, recv, bytes, sub.comm, options.warmup, iterations, memory);
          }, options.repeat);
          force(static_cast<int>(kind), -1);
          for (int b = 0; b < 2; ++b) {
            const double us = timing.latency_us[b];
            if (us < 0) continue;
            results.push_back(Measurement{kind, size, topology, bytes, static_cast<Backend>(b), us, iterations});
            report_row(options, world_rank, results.back());
          }
          if (world_rank == 0) {
            const double elapsed = PMPI_Wtime() - started;
            const double left = elapsed / static_cast<double>(done) * static_cast<double>(steps - done);
            std::printf("[%zu/%zu] %s, %d ranks, %s, %s: nccl %.1f us, mpi %.1f us%s; about %.0f s left\n", done, steps,
                        kind_name(kind), size, topology_name(topology), human_bytes(bytes).c_str(),
                        timing.latency_us[0], timing.latency_us[1], rounds_note(timing).c_str(), left);
            std::fflush(stdout);
          }
        }
      }
      if (!all_ok && world_rank == 0) std::printf("%d ranks: not enough device memory, skipped\n", size);
    } else {
      done += kinds.size() * sizes.size();
    }
    PMPI_Barrier(world);
    if (sub.owned) PMPI_Comm_free(&sub.comm);
  }
  return results;
}

}  // namespace mcrp::tuning
