// Parsing and validation of tuning files: a good file yields the table it describes and survives a
// write/parse round trip; every kind of bad file gives a message naming its line or JSON path.
#include <gtest/gtest.h>

#include "tests/tuning/tuning_test_support.h"
#include "tuning/tuning_file.h"

namespace mcrp::tuning {
namespace {

std::string error_of(const std::string& text) {
  ParsedTable parsed = parse_tuning_file(text, "t.json");
  EXPECT_FALSE(parsed.table.has_value()) << "accepted: " << text;
  return parsed.error;
}

// A one-collective document with the given allreduce ranges.
std::string with_ranges(const std::string& ranges) {
  return R"({"version": 1, "collectives": {"allreduce": [{"comm_size": 1, "ranges": [)" + ranges + "]}]}}";
}

TEST(TuningFile, ExampleParsesIntoItsRules) {
  ParsedTable parsed = parse_tuning_file(read_test_file("example.json"), "example.json");
  ASSERT_TRUE(parsed.table) << parsed.error;
  const Table& t = *parsed.table;
  EXPECT_EQ(t.source, Source::tuning_file);
  EXPECT_EQ(t.origin, "example.json");
  const auto& allreduce = t.per_kind[static_cast<int>(CollKind::allreduce)];
  ASSERT_EQ(allreduce.size(), 2u);
  EXPECT_EQ(allreduce[1].min_comm_size, 8);
  EXPECT_EQ(allreduce[1].topology, Topology::multi_node);
  ASSERT_EQ(allreduce[0].ranges.size(), 2u);
  EXPECT_EQ(allreduce[0].ranges[0].hi, 65536u);
  EXPECT_EQ(allreduce[0].ranges[0].backend, Backend::mpi);
  EXPECT_EQ(allreduce[0].ranges[1].hi, kUnknownSize);
  EXPECT_EQ(t.per_kind[static_cast<int>(CollKind::bcast)][0].topology, Topology::single_node);
  EXPECT_TRUE(t.per_kind[static_cast<int>(CollKind::alltoall)].empty());
}

TEST(TuningFile, WriteThenParseGivesTheSameTable) {
  ParsedTable first = parse_tuning_file(read_test_file("example.json"), "a");
  ASSERT_TRUE(first.table);
  const std::string written = write_tuning_file(*first.table, FileMetadata{"host", "2025-01-01T00:00:00Z", "c"});
  ParsedTable second = parse_tuning_file(written, "b");
  ASSERT_TRUE(second.table) << second.error << "\n" << written;
  EXPECT_EQ(first.table->hash(), second.table->hash());
  EXPECT_NE(first.table->hash(), builtin_table().hash());
}

TEST(TuningFile, StagedChunkBytesIsReadWrittenAndHashed) {
  ParsedTable parsed = parse_tuning_file(R"({"version": 1, "staged_chunk_bytes": 2097152, "collectives": {}})", "c");
  ASSERT_TRUE(parsed.table) << parsed.error;
  EXPECT_EQ(parsed.table->staged_chunk_bytes, 2097152u);
  EXPECT_NE(parsed.table->hash(), parse_tuning_file(R"({"version": 1, "collectives": {}})", "d").table->hash());
  const std::string written = write_tuning_file(*parsed.table, FileMetadata{});
  ParsedTable again = parse_tuning_file(written, "e");
  ASSERT_TRUE(again.table) << again.error << "\n" << written;
  EXPECT_EQ(again.table->staged_chunk_bytes, 2097152u);
  EXPECT_EQ(parse_tuning_file(R"({"version": 1, "collectives": {}})", "f").table->staged_chunk_bytes,
            kDefaultStagedChunkBytes);
  EXPECT_NE(error_of(R"({"version": 1, "staged_chunk_bytes": -5, "collectives": {}})").find("staged_chunk_bytes: expected a non-negative"),
            std::string::npos);
}

TEST(TuningFile, CollectivesOwnChunksAreReadWrittenAndHashed) {
  const std::string empty = R"({"version": 1, "collectives": {}})";
  ParsedTable parsed = parse_tuning_file(
      R"({"version": 1, "staged_chunk_bytes": 4194304,
          "staged_chunk_bytes_by_collective": {"reduce_scatter": 0, "bcast": 262144}, "collectives": {}})",
      "o");
  ASSERT_TRUE(parsed.table) << parsed.error;
  const Table& table = *parsed.table;
  EXPECT_EQ(table.staged_chunk_for(CollKind::reduce_scatter), 0u);
  EXPECT_EQ(table.staged_chunk_for(CollKind::bcast), 262144u);
  EXPECT_EQ(table.staged_chunk_for(CollKind::allreduce), 4194304u);
  EXPECT_EQ(table.staged_chunk_for(CollKind::reduce_scatter_block), 4194304u);
  ParsedTable shared_only =
      parse_tuning_file(R"({"version": 1, "staged_chunk_bytes": 4194304, "collectives": {}})", "s");
  EXPECT_NE(table.hash(), shared_only.table->hash());
  const std::string written = write_tuning_file(table, FileMetadata{});
  ParsedTable again = parse_tuning_file(written, "w");
  ASSERT_TRUE(again.table) << again.error << "\n" << written;
  EXPECT_EQ(again.table->own_staged_chunk, table.own_staged_chunk);
  EXPECT_EQ(again.table->hash(), table.hash());
  EXPECT_EQ(write_tuning_file(*parse_tuning_file(empty, "e").table, FileMetadata{}).find("by_collective"),
            std::string::npos);
  const auto error_with = [](const std::string& chunks) {
    return error_of(R"({"version": 1, "staged_chunk_bytes_by_collective": )" + chunks + R"(, "collectives": {}})");
  };
  EXPECT_NE(error_with(R"({"alltoall": 65536})")
                .find("staged_chunk_bytes_by_collective.alltoall: this collective's staged path is not pipelined"),
            std::string::npos);
  EXPECT_NE(
      error_with(R"({"allreduse": 65536})").find("staged_chunk_bytes_by_collective.allreduse: unknown collective"),
      std::string::npos);
  EXPECT_NE(error_with(R"({"bcast": -1})").find("staged_chunk_bytes_by_collective.bcast: expected a non-negative"),
            std::string::npos);
  EXPECT_NE(error_with(R"({"bcast": 4611686018427387905})").find("bcast: expected at most 4611686018427387904 bytes"),
            std::string::npos);
  EXPECT_NE(error_with("[65536]").find("staged_chunk_bytes_by_collective: expected an object"), std::string::npos);
}

TEST(TuningFile, P2pEagerLimitIsReadWrittenAndHashed) {
  const std::string empty = R"({"version": 1, "collectives": {}})";
  ParsedTable parsed = parse_tuning_file(R"({"version": 1, "p2p_eager_limit_bytes": 4096, "collectives": {}})", "p");
  ASSERT_TRUE(parsed.table) << parsed.error;
  EXPECT_EQ(parsed.table->p2p_eager_limit_bytes, 4096u);
  EXPECT_EQ(parsed.table->staged_chunk_bytes, kDefaultStagedChunkBytes);
  EXPECT_NE(parsed.table->hash(), parse_tuning_file(empty, "d").table->hash());
  const std::string written = write_tuning_file(*parsed.table, FileMetadata{});
  EXPECT_NE(written.find("\"p2p_eager_limit_bytes\": 4096"), std::string::npos) << written;
  ParsedTable again = parse_tuning_file(written, "w");
  ASSERT_TRUE(again.table) << again.error << "\n" << written;
  EXPECT_EQ(again.table->p2p_eager_limit_bytes, 4096u);
  EXPECT_EQ(again.table->hash(), parsed.table->hash());
  // 0 (every payload by rendezvous) and the largest accepted value are kept.
  for (std::uint64_t bytes : {std::uint64_t{0}, kMaxP2pEagerLimitBytes}) {
    Table table = builtin_table();
    table.p2p_eager_limit_bytes = bytes;
    ParsedTable round = parse_tuning_file(write_tuning_file(table, FileMetadata{}), "r");
    ASSERT_TRUE(round.table) << round.error;
    EXPECT_EQ(round.table->p2p_eager_limit_bytes, bytes);
  }
}

TEST(TuningFile, DefaultSizesAreNotWritten) {
  const Table table = builtin_table();
  EXPECT_EQ(table.p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes);
  EXPECT_EQ(kDefaultP2pEagerLimitBytes, 65536u);
  const std::string written = write_tuning_file(table, FileMetadata{});
  EXPECT_EQ(written.find("p2p_eager_limit_bytes"), std::string::npos) << written;
  EXPECT_EQ(written.find("staged_chunk_bytes"), std::string::npos) << written;
  ParsedTable parsed = parse_tuning_file(written, "w");
  ASSERT_TRUE(parsed.table) << parsed.error;
  EXPECT_EQ(parsed.table->p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes);
}

TEST(TuningFile, MalformedP2pEagerLimitIsNamed) {
  const auto with_limit = [](const std::string& value) {
    return R"({"version": 1, "p2p_eager_limit_bytes": )" + value + R"(, "collectives": {}})";
  };
  for (const char* bad : {"-1", "\"64K\"", "1.5", "null", "true", "[4096]"}) {
    const std::string e = error_of(with_limit(bad));
    EXPECT_NE(e.find("t.json: p2p_eager_limit_bytes: expected a non-negative integer number of bytes"), std::string::npos)
        << bad << ": " << e;
  }
  const std::string too_large = error_of(with_limit(std::to_string(kMaxP2pEagerLimitBytes + 1)));
  EXPECT_NE(too_large.find("p2p_eager_limit_bytes: expected at most 1073741824 bytes"), std::string::npos) << too_large;
  EXPECT_NE(error_of(with_limit("18446744073709551616")).find("p2p_eager_limit_bytes"), std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "p2p_eager_limit": 4096, "collectives": {}})").find("p2p_eager_limit: unknown field"),
            std::string::npos);
}

TEST(TuningFile, SyntaxErrorNamesLineAndColumn) {
  const std::string e = error_of("{\n  \"version\": 1,\n  \"collectives\": {,}\n}\n");
  EXPECT_NE(e.find("t.json: line 3, column 19"), std::string::npos) << e;
}

TEST(TuningFile, WrongVersionIsRefused) {
  const std::string e = error_of(R"({"version": 2, "collectives": {}})");
  EXPECT_NE(e.find("version"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported version 2"), std::string::npos) << e;
  EXPECT_NE(error_of(R"({"collectives": {}})").find("missing field \"version\""), std::string::npos);
}

TEST(TuningFile, UnknownCollectiveIsNamed) {
  const std::string e = error_of(R"({"version": 1, "collectives": {"allreduse": []}})");
  EXPECT_NE(e.find("collectives.allreduse: unknown collective"), std::string::npos) << e;
}

TEST(TuningFile, OverlappingRangesAreNamed) {
  const std::string e = error_of(with_ranges(
      R"({"from": 0, "to": 100, "path": "mpi"}, {"from": 50, "to": null, "path": "nccl"})"));
  EXPECT_NE(e.find("collectives.allreduce[0].ranges[1]: overlaps"), std::string::npos) << e;
}

TEST(TuningFile, UnsortedRangesAreNamed) {
  const std::string e = error_of(with_ranges(
      R"({"from": 0, "to": 100, "path": "mpi"}, {"from": 200, "to": null, "path": "nccl"}, {"from": 100, "to": 200, "path": "mpi"})"));
  EXPECT_NE(e.find("ranges[1]: leaves a gap"), std::string::npos) << e;
  const std::string unsorted = error_of(with_ranges(
      R"({"from": 0, "to": 100, "path": "mpi"}, {"from": 0, "to": null, "path": "nccl"})"));
  EXPECT_NE(unsorted.find("ranges[1]: overlaps"), std::string::npos) << unsorted;
  const std::string backwards = error_of(with_ranges(
      R"({"from": 0, "to": 100, "path": "mpi"}, {"from": 100, "to": 200, "path": "mpi"}, {"from": 50, "to": null, "path": "nccl"})"));
  EXPECT_NE(backwards.find("ranges[2]: ranges are not sorted"), std::string::npos) << backwards;
}

TEST(TuningFile, RangesMustCoverEverySize) {
  EXPECT_NE(error_of(with_ranges(R"({"from": 8, "to": null, "path": "mpi"})")).find("ranges[0].from: the first range must start at 0"),
            std::string::npos);
  EXPECT_NE(error_of(with_ranges(R"({"from": 0, "to": 64, "path": "mpi"})")).find("ranges[0].to: the last range must end with null"),
            std::string::npos);
  EXPECT_NE(error_of(with_ranges("")).find("no ranges"), std::string::npos);
  EXPECT_NE(error_of(with_ranges(R"({"from": 0, "to": 0, "path": "mpi"})")).find("empty range"), std::string::npos);
}

TEST(TuningFile, BadFieldValuesAreNamed) {
  EXPECT_NE(error_of(with_ranges(R"({"from": 0, "to": null, "path": "gloo"})")).find("ranges[0].path: expected \"nccl\" or \"mpi\""),
            std::string::npos);
  EXPECT_NE(error_of(with_ranges(R"({"from": -1, "to": null, "path": "mpi"})")).find("ranges[0].from: expected a non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(with_ranges(R"({"from": 0, "to": null, "path": "mpi", "paht": 1})")).find("ranges[0].paht: unknown field"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "collectives": {"bcast": [{"comm_size": 0, "ranges": []}]}})").find("collectives.bcast[0].comm_size"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"version": 1, "collectives": {"bcast": [{"comm_size": 2, "topology": "rack", "ranges": []}]}})").find("collectives.bcast[0].topology"),
            std::string::npos);
  EXPECT_NE(error_of(R"([1, 2])").find("expected an object"), std::string::npos);
  EXPECT_NE(error_of("").find("line 1, column 1"), std::string::npos);
}

TEST(TuningFile, DuplicateRulesAreRefused) {
  const std::string rule = R"({"comm_size": 4, "topology": "single_node", "ranges": [{"from": 0, "to": null, "path": "mpi"}]})";
  const std::string e = error_of(R"({"version": 1, "collectives": {"gather": [)" + rule + "," + rule + "]}}");
  EXPECT_NE(e.find("collectives.gather[1]: a second rule for comm_size 4"), std::string::npos) << e;
}

}  // namespace
}  // namespace mcrp::tuning
