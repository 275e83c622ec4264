// MPI test (3 ranks): only rank 0 can read the tuning file, yet every rank ends with the same table
// (same hash, same origin); a bad file gives every rank the same message and the built-in table.
// Also: the WORLD map (tuning/world_map.h) classifies communicators as the collective query does.
// Exit status 0 when every check passed on every rank.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/tuning/tuning_test_support.h"
#include "tuning/shared_table.h"
#include "tuning/topology.h"
#include "tuning/tuning_file.h"
#include "tuning/world_map.h"

using namespace mcrp::tuning;

namespace {

int g_failures = 0;
int g_rank = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what.c_str());
  }
}

// Rank 0 writes `text` to a private file; the other ranks get a path that does not exist, so any
// table they end with must have come through the broadcast.
std::string rank0_file(const std::string& text, const char* name) {
  if (g_rank != 0) return "/nonexistent/only-rank-0-has-it.json";
  const std::string path = "/tmp/mcrpmpi-shared-table-" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

// True when every rank holds the same value as rank 0.
bool same_everywhere(unsigned long long value) {
  unsigned long long lo = 0, hi = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&value, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

unsigned long long text_hash(const std::string& text) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

void good_file_reaches_every_rank() {
  const std::string text = read_test_file("example.json");
  const std::string path = rank0_file(text, "good.json");
  const SharedLoad load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
  check(load.mpi_error == MPI_SUCCESS && load.installed, "good file installed: " + load.message);
  check(load.message.empty(), "no message for a good file: " + load.message);
  check(active_table().source == Source::tuning_file, "table source is the tuning file");
  const std::uint64_t expected = parse_tuning_file(text, "x").table->hash();
  check(active_table().hash() == expected, "table hash equals the file's");
  check(same_everywhere(active_table().hash()), "same table hash on every rank");
  check(same_everywhere(text_hash(active_table().origin)), "same origin on every rank: " + active_table().origin);
  if (g_rank == 0) std::remove(path.c_str());
}

void bad_file_falls_back_everywhere(const char* name, const std::string& text, const std::string& expected) {
  const std::string path = rank0_file(text, name);
  const SharedLoad load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
  check(!load.installed, std::string(name) + ": not installed");
  check(load.message.find(expected) != std::string::npos, std::string(name) + ": message \"" + load.message +
                                                              "\" should contain \"" + expected + "\"");
  check(load.message.find("using the built-in table") != std::string::npos, std::string(name) + ": says it falls back");
  check(same_everywhere(text_hash(load.message)), std::string(name) + ": same message on every rank");
  check(active_table().source == Source::builtin && active_table().hash() == builtin_table().hash(),
        std::string(name) + ": built-in table in force");
  if (g_rank == 0) {
    std::printf("%s -> %s\n", name, load.message.c_str());
    std::remove(path.c_str());
  }
}

void missing_files() {
  // A user-named file that does not exist is reported; the default location missing is silent.
  SharedLoad named = load_shared_table(MPI_COMM_WORLD, "/nonexistent/t.json", true);
  check(!named.installed && named.message.find("/nonexistent/t.json: cannot open") != std::string::npos,
        "named missing file reported: " + named.message);
  SharedLoad quiet = load_shared_table(MPI_COMM_WORLD, "/nonexistent/t.json", false);
  check(!quiet.installed && quiet.message.empty(), "missing default file is silent: " + quiet.message);
}

void initialize_reads_the_environment() {
  const std::string path = rank0_file(read_test_file("example.json"), "env.json");
  setenv("MCRPMPI_TUNING_FILE", path.c_str(), 1);
  check(initialize(MPI_COMM_WORLD) == MPI_SUCCESS, "initialize succeeds");
  check(active_table().source == Source::tuning_file, "initialize installed MCRPMPI_TUNING_FILE");
  check(same_everywhere(active_table().hash()), "initialize: same hash everywhere");
  unsetenv("MCRPMPI_TUNING_FILE");
  if (g_rank == 0) std::remove(path.c_str());
}

// MCRPMPI_STAGED_CHUNK_BYTES counts as rank 0 read it: ranks that set another value (or none) still
// chunk alike. It is every collective's chunk, the file's collectives' own included. A tuning file's
// staged_chunk_bytes and own chunks hold where no rank 0 override is given.
void chunk_override_comes_from_rank_0() {
  const std::string path = rank0_file(R"({"version": 1, "staged_chunk_bytes": 8192,
      "staged_chunk_bytes_by_collective": {"bcast": 65536}, "collectives": {}})",
                                      "chunk.json");
  if (g_rank == 0) setenv("MCRPMPI_STAGED_CHUNK_BYTES", "4096", 1);
  if (g_rank == 1) setenv("MCRPMPI_STAGED_CHUNK_BYTES", "123", 1);
  SharedLoad load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
  check(load.installed && active_table().staged_chunk_bytes == 4096, "rank 0's chunk override in force: " +
                                                                      std::to_string(active_table().staged_chunk_bytes));
  check(active_table().staged_chunk_for(mcrp::CollKind::bcast) == 4096,
        "rank 0's chunk override replaces a collective's own: " +
            std::to_string(active_table().staged_chunk_for(mcrp::CollKind::bcast)));
  check(same_everywhere(active_table().hash()), "the same table everywhere under rank 0's chunk override");
  unsetenv("MCRPMPI_STAGED_CHUNK_BYTES");
  if (g_rank == 1) setenv("MCRPMPI_STAGED_CHUNK_BYTES", "123", 1);
  load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
  check(active_table().staged_chunk_bytes == 8192, "the file's staged_chunk_bytes without a rank 0 override");
  check(active_table().staged_chunk_for(mcrp::CollKind::bcast) == 65536 &&
            active_table().staged_chunk_for(mcrp::CollKind::allgather) == 8192,
        "the file's own chunk for bcast, its shared one for allgather");
  if (g_rank == 0) setenv("MCRPMPI_STAGED_CHUNK_BYTES", "lots", 1);
  load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
  check(active_table().staged_chunk_bytes == 8192, "a bad override is ignored");
  check(g_rank != 0 || load.message.find("ignoring MCRPMPI_STAGED_CHUNK_BYTES=lots") != std::string::npos,
        "a bad override is reported by rank 0: " + load.message);
  unsetenv("MCRPMPI_STAGED_CHUNK_BYTES");
  load = load_shared_table(MPI_COMM_WORLD, "/nonexistent/t.json", false);
  check(active_table().staged_chunk_bytes == kDefaultStagedChunkBytes, "the built-in chunk by default");
  if (g_rank == 0) std::remove(path.c_str());
}

// MCRPMPI_P2P_EAGER_LIMIT likewise: rank 0's value (suffixes accepted) is every rank's; a tuning
// file's p2p_eager_limit_bytes holds without it; a bad or too large value is reported and ignored.
void eager_limit_override_comes_from_rank_0() {
  const char* variable = "MCRPMPI_P2P_EAGER_LIMIT";
  const std::string path = rank0_file(R"({"version": 1, "p2p_eager_limit_bytes": 2048, "collectives": {}})", "eager.json");
  const auto load_with = [&](const char* rank0_value, const char* other_value) {
    if (rank0_value != nullptr && g_rank == 0) setenv(variable, rank0_value, 1);
    if (other_value != nullptr && g_rank != 0) setenv(variable, other_value, 1);
    SharedLoad load = load_shared_table(MPI_COMM_WORLD, path.c_str(), true);
    unsetenv(variable);
    check(same_everywhere(active_table().p2p_eager_limit_bytes), "the same eager limit on every rank");
    check(same_everywhere(active_table().hash()), "the same table on every rank");
    return load;
  };
  SharedLoad load = load_with("64K", "7");
  check(load.installed && active_table().p2p_eager_limit_bytes == 65536,
        "rank 0's eager limit (64K) in force: " + std::to_string(active_table().p2p_eager_limit_bytes));
  load = load_with("0", "1M");
  check(active_table().p2p_eager_limit_bytes == 0, "rank 0's eager limit 0 in force");
  load = load_with(nullptr, "1M");
  check(active_table().p2p_eager_limit_bytes == 2048, "the file's p2p_eager_limit_bytes without a rank 0 override");
  load = load_with("64KB", nullptr);
  check(active_table().p2p_eager_limit_bytes == 2048, "a malformed override is ignored");
  check(g_rank != 0 || load.message.find("ignoring MCRPMPI_P2P_EAGER_LIMIT=64KB (expected digits") != std::string::npos,
        "a malformed override is reported by rank 0: " + load.message);
  load = load_with("2G", nullptr);
  check(active_table().p2p_eager_limit_bytes == 2048, "a too large override is ignored");
  check(g_rank != 0 || load.message.find("ignoring MCRPMPI_P2P_EAGER_LIMIT=2G (more than the largest accepted value, "
                                         "1073741824 bytes)") != std::string::npos,
        "a too large override is reported by rank 0: " + load.message);
  if (g_rank == 0) setenv(variable, "4096", 1);
  load = load_shared_table(MPI_COMM_WORLD, "/nonexistent/t.json", false);
  check(active_table().source == Source::builtin && active_table().p2p_eager_limit_bytes == 4096,
        "rank 0's override applies to the built-in table too");
  unsetenv(variable);
  load = load_shared_table(MPI_COMM_WORLD, "/nonexistent/t.json", false);
  check(active_table().p2p_eager_limit_bytes == kDefaultP2pEagerLimitBytes, "the built-in eager limit by default");
  if (g_rank == 0) std::remove(path.c_str());
}

// The WORLD map answers what the collective classification answers, without communicating, and
// says NCCL is usable on a communicator only when every member said so.
void world_map_matches_the_collective_classification() {
  check(facts_from_world_map(MPI_COMM_WORLD).topology == Topology::any, "no node map before learn_world_map");
  const bool usable = g_rank != 1;  // rank 1 pretends it cannot load NCCL
  const bool has_cuda = g_rank != 2;  // and rank 2 that it has no CUDA device
  const int local_rank = learn_world_map(has_cuda, usable);
  MPI_Comm node = MPI_COMM_NULL, halves = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = -1;
  MPI_Comm_rank(node, &node_rank);
  check(local_rank == node_rank, "learn_world_map returns the rank on the node");
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &halves);  // reversed order inside each half
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF, node, halves}) {
    check(facts_from_world_map(comm).topology == classify_topology(comm), "world map topology equals classify_topology");
  }
  check(!facts_from_world_map(MPI_COMM_WORLD).nccl_everywhere, "no NCCL on WORLD when rank 1 lacks it");
  check(facts_from_world_map(MPI_COMM_SELF).nccl_everywhere == usable, "NCCL on SELF is the rank's own answer");
  check(facts_from_world_map(halves).nccl_everywhere == (g_rank % 2 == 0), "NCCL on the half without rank 1");
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(facts_from_world_map(MPI_COMM_WORLD).cuda_everywhere == (size < 3), "CUDA on WORLD unless rank 2 is in it");
  check(facts_from_world_map(MPI_COMM_SELF).cuda_everywhere == has_cuda, "CUDA on SELF is the rank's own answer");
  check(facts_from_world_map(halves).cuda_everywhere == (g_rank % 2 == 1 || size < 3),
        "CUDA on the half without rank 2");
  MPI_Comm_free(&node);
  MPI_Comm_free(&halves);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  good_file_reaches_every_rank();
  bad_file_falls_back_everywhere("syntax.json", "{\n  \"version\": 1,\n\n  \"collectives\": {\"allreduce\": [}\n}\n",
                                 "line 4, column");
  bad_file_falls_back_everywhere(
      "overlap.json",
      R"({"version": 1, "collectives": {"allreduce": [{"comm_size": 1, "ranges": [{"from": 0, "to": 100, "path": "mpi"}, {"from": 10, "to": null, "path": "nccl"}]}]}})",
      "collectives.allreduce[0].ranges[1]: overlaps");
  bad_file_falls_back_everywhere("version.json", R"({"version": 99, "collectives": {}})", "unsupported version 99");
  missing_files();
  chunk_override_comes_from_rank_0();
  eager_limit_override_comes_from_rank_0();
  initialize_reads_the_environment();
  world_map_matches_the_collective_classification();
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("%s: %d failed checks\n", failures == 0 ? "PASS" : "FAIL", failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
