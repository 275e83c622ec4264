// Lookup (communicator size, topology, message-size ranges, unknown sizes) and the precedence
// force_backend > MCRPMPI_<COLLECTIVE> > tuning file > built-in table, on synthetic tables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/tuning/tuning_test_support.h"
#include "tuning/tuning_file.h"

namespace mcrp::tuning {
namespace {

Table example() {
  ParsedTable parsed = parse_tuning_file(read_test_file("example.json"), "example.json");
  EXPECT_TRUE(parsed.table) << parsed.error;
  return parsed.table ? *parsed.table : builtin_table();
}

Decision look(const Table& t, CollKind kind, std::uint64_t bytes, int size, Topology topology = Topology::any) {
  return t.lookup(Query{kind, bytes, size, topology});
}

TEST(Lookup, PicksTheRangeHoldingTheSize) {
  const Table t = example();
  EXPECT_EQ(look(t, CollKind::allreduce, 0, 2).backend, Backend::mpi);
  EXPECT_EQ(look(t, CollKind::allreduce, 65535, 2).backend, Backend::mpi);
  const Decision d = look(t, CollKind::allreduce, 65536, 2);
  EXPECT_EQ(d.backend, Backend::nccl);
  EXPECT_EQ(d.source, Source::tuning_file);
  EXPECT_EQ(d.range_lo, 65536u);
  EXPECT_EQ(d.range_hi, kUnknownSize);
  EXPECT_EQ(d.rule_index, 0);
  EXPECT_EQ(d.range_index, 1);
}

TEST(Lookup, UnknownSizeUsesTheLastRange) {
  EXPECT_EQ(look(example(), CollKind::allreduce, kUnknownSize, 2).backend, Backend::nccl);
}

TEST(Lookup, LargestApplicableCommSizeWinsAndTopologyMustMatch) {
  const Table t = example();
  // 8+ ranks across nodes: the comm_size 8 multi_node rule (mpi below 4 KiB).
  EXPECT_EQ(look(t, CollKind::allreduce, 8192, 16, Topology::multi_node).backend, Backend::nccl);
  EXPECT_EQ(look(t, CollKind::allreduce, 8192, 16, Topology::multi_node).rule_index, 1);
  // On one node the multi_node rule does not apply: the comm_size 1 "any" rule does.
  EXPECT_EQ(look(t, CollKind::allreduce, 8192, 16, Topology::single_node).backend, Backend::mpi);
  EXPECT_EQ(look(t, CollKind::allreduce, 8192, 16, Topology::single_node).rule_index, 0);
  // Below 8 ranks only the comm_size 1 rule applies.
  EXPECT_EQ(look(t, CollKind::allreduce, 8192, 7, Topology::multi_node).rule_index, 0);
  // bcast has only a single_node rule: on several nodes the built-in default decides.
  EXPECT_EQ(look(t, CollKind::bcast, 8, 4, Topology::multi_node).source, Source::builtin);
  EXPECT_EQ(look(t, CollKind::bcast, 8, 4, Topology::single_node).source, Source::tuning_file);
}

TEST(Lookup, ExactTopologyBeatsAnyAtEqualCommSize) {
  Table t;
  t.source = Source::tuning_file;
  auto& rules = t.per_kind[static_cast<int>(CollKind::gather)];
  rules.push_back(Rules{4, Topology::any, {Range{0, kUnknownSize, Backend::nccl}}});
  rules.push_back(Rules{4, Topology::single_node, {Range{0, kUnknownSize, Backend::mpi}}});
  EXPECT_EQ(look(t, CollKind::gather, 1, 4, Topology::single_node).backend, Backend::mpi);
  EXPECT_EQ(look(t, CollKind::gather, 1, 4, Topology::multi_node).backend, Backend::nccl);
}

TEST(Lookup, CollectivesWithoutRulesUseTheBuiltInDefault) {
  const Decision d = look(example(), CollKind::alltoallv, kUnknownSize, 3);
  EXPECT_EQ(d.backend, Backend::nccl);
  EXPECT_EQ(d.source, Source::builtin);
}

TEST(Lookup, HashDependsOnRulesOnly) {
  Table a = example(), b = example();
  b.origin = "elsewhere";
  EXPECT_EQ(a.hash(), b.hash());
  b.per_kind[static_cast<int>(CollKind::allreduce)][0].ranges[0].backend = Backend::nccl;
  EXPECT_NE(a.hash(), b.hash());
}

// Restores the built-in table and the settings after each precedence test.
class Precedence : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("MCRPMPI_ALLREDUCE");
    force_backend(CollKind::allreduce, std::nullopt);
    force_p2p_eager_limit(std::nullopt);
    force_staged_chunk_bytes(std::nullopt);
    for (int k = 0; k < kCollKindCount; ++k) {
      if (has_staged_pipeline(static_cast<CollKind>(k)))
        force_staged_chunk_bytes(static_cast<CollKind>(k), std::nullopt);
    }
    install_table(builtin_table());
    load_settings();
  }
};

TEST_F(Precedence, BuiltInThenFileThenEnvThenForce) {
  unsetenv("MCRPMPI_ALLREDUCE");
  load_settings();
  const Query q{CollKind::allreduce, 1024, 4, Topology::single_node};
  EXPECT_EQ(decide(q).source, Source::builtin);
  EXPECT_EQ(decide(q).backend, Backend::nccl);

  install_table(example());
  EXPECT_EQ(decide(q).source, Source::tuning_file);
  EXPECT_EQ(decide(q).backend, Backend::mpi);

  setenv("MCRPMPI_ALLREDUCE", "nccl", 1);
  load_settings();
  EXPECT_EQ(decide(q).source, Source::env_override);
  EXPECT_EQ(decide(q).backend, Backend::nccl);
  // Other collectives keep the table.
  EXPECT_EQ(decide(Query{CollKind::bcast, 8, 2, Topology::single_node}).source, Source::tuning_file);

  force_backend(CollKind::allreduce, Backend::mpi);
  EXPECT_EQ(decide(q).source, Source::forced);
  EXPECT_EQ(decide(q).backend, Backend::mpi);
  EXPECT_EQ(mcrpmpi_force_backend(static_cast<int>(CollKind::allreduce), -1), 0);
  EXPECT_EQ(decide(q).source, Source::env_override);
  EXPECT_EQ(mcrpmpi_force_backend(kCollKindCount, 0), -1);
  EXPECT_EQ(mcrpmpi_force_backend(0, 2), -1);
}

// A byte setting of the table the tuning suite forces (the eager limit, the staged chunk): the forced
// value beats the table's through the C hook and the C++ setter alike, a value above the largest the
// table accepts is refused (the forced one stays), and a release goes back to the table's.
struct ForcedSetting {
  std::uint64_t Table::*field;
  std::uint64_t default_bytes;
  std::uint64_t max_bytes;
  std::uint64_t (*in_force)();
  int (*force_from_c)(long long);
  void (*force)(std::optional<std::uint64_t>);
};

void expect_forced_beats_the_table(const ForcedSetting& s) {
  EXPECT_EQ(s.in_force(), s.default_bytes);
  Table table = builtin_table();
  table.*s.field = 4096;
  install_table(table);
  EXPECT_EQ(s.in_force(), 4096u);
  EXPECT_EQ(s.force_from_c(0), 0);
  EXPECT_EQ(s.in_force(), 0u);
  EXPECT_EQ(s.force_from_c(static_cast<long long>(s.max_bytes)), 0);
  EXPECT_EQ(s.in_force(), s.max_bytes);
  EXPECT_EQ(s.force_from_c(static_cast<long long>(s.max_bytes) + 1), -1);
  EXPECT_EQ(s.in_force(), s.max_bytes);
  EXPECT_EQ(s.force_from_c(-1), 0);
  EXPECT_EQ(s.in_force(), 4096u);
  s.force(100);
  EXPECT_EQ(s.in_force(), 100u);
  s.force(std::nullopt);
  EXPECT_EQ(s.in_force(), 4096u);
}

TEST_F(Precedence, ForcedEagerLimitBeatsTheTableUntilReleased) {
  expect_forced_beats_the_table({&Table::p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes, kMaxP2pEagerLimitBytes,
                                 p2p_eager_limit, mcrpmpi_force_p2p_eager_limit, force_p2p_eager_limit});
}

TEST_F(Precedence, ForcedStagedChunkBeatsTheTableUntilReleased) {
  expect_forced_beats_the_table({&Table::staged_chunk_bytes, kDefaultStagedChunkBytes, kMaxStagedChunkBytes,
                                 staged_chunk_bytes, mcrpmpi_force_staged_chunk_bytes, force_staged_chunk_bytes});
  // Each setting is forced on its own.
  EXPECT_EQ(mcrpmpi_force_staged_chunk_bytes(64), 0);
  EXPECT_EQ(p2p_eager_limit(), kDefaultP2pEagerLimitBytes);
  EXPECT_EQ(mcrpmpi_force_staged_chunk_bytes(-1), 0);
}

// A collective's chunk: forced for it > forced for all > the table's own for it > the table's for all.
TEST_F(Precedence, ACollectivesOwnChunkComesBeforeEveryCollectivesAtEachLevel) {
  constexpr CollKind bcast = CollKind::bcast;
  const int bcast_kind = static_cast<int>(bcast);
  Table table = builtin_table();
  table.staged_chunk_bytes = 4096;
  table.own_staged_chunk[bcast_kind] = 8192;
  install_table(table);
  EXPECT_EQ(staged_chunk_bytes(bcast), 8192u);
  EXPECT_EQ(staged_chunk_bytes(CollKind::allreduce), 4096u);
  EXPECT_EQ(staged_chunk_bytes(), 4096u);  // point-to-point's staged channel: every collective's
  // Forced for every collective, as the suite times each chunk.
  force_staged_chunk_bytes(std::optional<std::uint64_t>(100));
  EXPECT_EQ(staged_chunk_bytes(bcast), 100u);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(bcast_kind, 0), 0);
  EXPECT_EQ(staged_chunk_bytes(bcast), 0u);
  EXPECT_EQ(staged_chunk_bytes(CollKind::allreduce), 100u);
  EXPECT_EQ(staged_chunk_bytes(), 100u);
  // Refused, changing nothing: a collective that is not pipelined, no collective, too large a chunk.
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(static_cast<int>(CollKind::alltoall), 64), -1);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(-1, 64), -1);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(kCollKindCount, 64), -1);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(bcast_kind, static_cast<long long>(kMaxStagedChunkBytes) + 1), -1);
  EXPECT_EQ(staged_chunk_bytes(bcast), 0u);
  EXPECT_EQ(staged_chunk_bytes(CollKind::alltoall), 100u);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(bcast_kind, static_cast<long long>(kMaxStagedChunkBytes)), 0);
  EXPECT_EQ(staged_chunk_bytes(bcast), kMaxStagedChunkBytes);
  EXPECT_EQ(mcrpmpi_force_own_staged_chunk_bytes(bcast_kind, -1), 0);
  EXPECT_EQ(staged_chunk_bytes(bcast), 100u);
  force_staged_chunk_bytes(std::nullopt);
  EXPECT_EQ(staged_chunk_bytes(bcast), 8192u);
}

TEST_F(Precedence, BadOrAutoEnvValueLeavesTheTable) {
  install_table(example());
  for (const char* value : {"auto", "", "NCCL!"}) {
    setenv("MCRPMPI_ALLREDUCE", value, 1);
    load_settings();
    EXPECT_EQ(decide(Query{CollKind::allreduce, 1024, 4}).source, Source::tuning_file) << value;
  }
}

TEST_F(Precedence, DebugLineNamesTheRule) {
  install_table(example());
  char line[256];
  const Query q{CollKind::allreduce, 4096, 16, Topology::multi_node};
  describe_decision(q, decide(q), line, sizeof line);
  EXPECT_STREQ(line,
               "allreduce 4 KiB, 16 ranks, multi_node -> nccl by tuning file example.json: "
               "collectives.allreduce[1].ranges[1] [4 KiB, inf)");
  setenv("MCRPMPI_ALLREDUCE", "mpi", 1);
  load_settings();
  describe_decision(q, decide(q), line, sizeof line);
  EXPECT_NE(std::string(line).find("by environment override MCRPMPI_ALLREDUCE"), std::string::npos) << line;
  describe_decision(q, decide(q), line, 16);  // truncation, no overflow
  EXPECT_EQ(std::string(line).size(), 15u);
}

}  // namespace
}  // namespace mcrp::tuning
