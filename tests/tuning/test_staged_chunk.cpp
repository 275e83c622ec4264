// Choosing the staged path's chunk from synthetic timings of the staged collectives: the sizes and
// chunks the suite times, the geometric-mean score, the margin that keeps the table's chunk, chunks
// as large as a message (its unpipelined row), a collective's own chunk beside every collective's;
// their place in the table, the CSV and the quality figure.
#include <gtest/gtest.h>

#include <fstream>

#include "tuning/selection.h"
#include "tuning/staged_chunk.h"
#include "tuning/tuning_file.h"

namespace mcrp::tuning {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

ChunkMeasurement row(std::uint64_t bytes, std::uint64_t chunk, double us, CollKind kind = CollKind::allreduce) {
  return ChunkMeasurement{2, Topology::single_node, bytes, chunk, us, 20, kind};
}

// Rows of `kind` at `bytes` for the chunks 0, 64 KiB, 128 KiB, ... (one latency each, in that order).
std::vector<ChunkMeasurement> at(std::uint64_t bytes, const std::vector<double>& us,
                                 CollKind kind = CollKind::allreduce) {
  std::vector<ChunkMeasurement> rows;
  std::uint64_t chunk = 0;
  for (double latency : us) {
    rows.push_back(row(bytes, chunk, latency, kind));
    chunk = chunk == 0 ? 64 * KiB : chunk * 2;
  }
  return rows;
}

std::vector<ChunkMeasurement> joined(std::vector<ChunkMeasurement> a, const std::vector<ChunkMeasurement>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(StagedChunk, ProbeSizesAreTheLargestAQuarterApart) {
  using Sizes = std::vector<std::uint64_t>;
  EXPECT_EQ(chunk_probe_sizes(8, 256 * MiB), (Sizes{32 * MiB, 8 * MiB, 2 * MiB}));  // 32 MiB at most
  EXPECT_EQ(chunk_probe_sizes(8, 16 * MiB), (Sizes{16 * MiB, 4 * MiB, 1 * MiB}));
  EXPECT_EQ(chunk_probe_sizes(8, 1 * MiB), (Sizes{1 * MiB, 256 * KiB}));        // none below 256 KiB
  EXPECT_EQ(chunk_probe_sizes(8, 3 * MiB), (Sizes{2 * MiB, 512 * KiB}));        // measured sizes only
  EXPECT_EQ(chunk_probe_sizes(4 * MiB, 64 * MiB), (Sizes{32 * MiB, 8 * MiB}));  // none below --min-bytes
  EXPECT_EQ(chunk_probe_sizes(3, 1 * MiB), (Sizes{768 * KiB}));                 // 3 B doubling: 768 KiB, 192 KiB
  EXPECT_TRUE(chunk_probe_sizes(8, 128 * KiB).empty());
  EXPECT_TRUE(chunk_probe_sizes(64 * MiB, 256 * MiB).empty());
}

TEST(StagedChunk, CandidatesLeaveAtLeastTwoChunks) {
  using Chunks = std::vector<std::uint64_t>;
  EXPECT_EQ(chunk_candidates(256 * KiB), (Chunks{0, 64 * KiB, 128 * KiB}));
  EXPECT_EQ(chunk_candidates(300 * KiB), (Chunks{0, 64 * KiB, 128 * KiB, 256 * KiB}));
  EXPECT_EQ(chunk_candidates(64 * KiB), (Chunks{0}));
  const Chunks large = chunk_candidates(32 * MiB);
  EXPECT_EQ(large.size(), 10u);  // 0, 64 KiB ... 16 MiB
  EXPECT_EQ(large.back(), 16 * MiB);
  EXPECT_EQ(chunk_candidates(1024 * MiB).back(), 16 * MiB);
}

TEST(StagedChunk, AChunkAsLargeAsTheMessageIsUnpipelined) {
  EXPECT_EQ(effective_chunk(1 * MiB, 0), 0u);
  EXPECT_EQ(effective_chunk(1 * MiB, 1 * MiB), 0u);
  EXPECT_EQ(effective_chunk(1 * MiB, 4 * MiB), 0u);
  EXPECT_EQ(effective_chunk(1 * MiB, 512 * KiB), 512 * KiB);
}

TEST(StagedChunk, LowestGeometricMeanOverTheSizesWins) {
  // At 1 MiB: 0, 64K, 128K, 256K, 512K; at 256 KiB: 0, 64K, 128K (unpipelined there too). 128 KiB is
  // the fastest at both sizes (score 1.0); unpipelined 2.0 and 1.0 (1.41), 64 KiB 1.8 and 1.33 (1.55).
  const auto rows = joined(at(1 * MiB, {100, 90, 50, 60, 80}), at(256 * KiB, {30, 40, 30}));
  EXPECT_EQ(choose_staged_chunk(rows, 1 * MiB, 0.05), 128 * KiB);
  // 1 MiB reads the unpipelined rows at both sizes: 2.0 and 1.0, far behind.
  EXPECT_EQ(choose_staged_chunk(rows, 0, 0.05), 128 * KiB);
}

TEST(StagedChunk, MarginKeepsTheTablesChunkThroughNearTies) {
  // 256 KiB: 60/50 = 1.2 at 1 MiB, and at 256 KiB it is unpipelined: 30/30. Score sqrt(1.2) = 1.095.
  const auto rows = joined(at(1 * MiB, {100, 90, 50, 60, 80}), at(256 * KiB, {30, 40, 30}));
  EXPECT_EQ(choose_staged_chunk(rows, 256 * KiB, 0.10), 256 * KiB);
  EXPECT_EQ(choose_staged_chunk(rows, 256 * KiB, 0.05), 128 * KiB);
  EXPECT_EQ(choose_staged_chunk(rows, 256 * KiB, 0.0), 128 * KiB);
}

TEST(StagedChunk, TiesGoToTheSmallerChunkAndUnmeasuredCurrentDoesNotCount) {
  const auto rows = at(1 * MiB, {100, 50, 50, 70});
  EXPECT_EQ(choose_staged_chunk(rows, 3 * MiB / 2, 0.05), 64 * KiB);  // 1.5 MiB at 1 MiB: unpipelined, 2x
  EXPECT_EQ(choose_staged_chunk(rows, 300 * KiB, 0.5), 64 * KiB);     // 300 KiB was not timed
  EXPECT_EQ(choose_staged_chunk(rows, 128 * KiB, 0.0), 128 * KiB);    // a tie keeps the table's
}

TEST(StagedChunk, NoChoiceWithoutRowsAtEverySize) {
  EXPECT_EQ(choose_staged_chunk({}, 1 * MiB, 0.05), std::nullopt);
  // 64 KiB timed at 1 MiB only: it cannot be scored, unpipelined can (and 1 MiB, which is unpipelined
  // at both sizes); the table's 64 KiB is not kept either.
  const auto rows = joined(at(1 * MiB, {100, 10}), {row(512 * KiB, 0, 50)});
  EXPECT_EQ(choose_staged_chunk(rows, 64 * KiB, 0.05), 0u);
  EXPECT_EQ(choose_staged_chunk(rows, 1 * MiB, 0.05), 1 * MiB);
}

TEST(StagedChunk, JudgeReadsTheChunksRowAtEachSize) {
  const auto rows = joined(at(1 * MiB, {100, 90, 50}), at(256 * KiB, {30, 40, 20}));
  int unmeasured = 0;
  auto points = judge_staged_chunk(rows, 128 * KiB, &unmeasured);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(unmeasured, 0);
  EXPECT_EQ(points[0].chosen.bytes, 256 * KiB);
  EXPECT_DOUBLE_EQ(points[0].ratio, 1.0);
  EXPECT_DOUBLE_EQ(points[1].ratio, 1.0);
  points = judge_staged_chunk(rows, 1 * MiB, &unmeasured);  // unpipelined at both sizes
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].ratio, 1.5);
  EXPECT_DOUBLE_EQ(points[1].ratio, 2.0);
  EXPECT_EQ(points[1].chosen.chunk_bytes, 0u);
  points = judge_staged_chunk(rows, 512 * KiB, &unmeasured);  // not timed at 1 MiB; unpipelined at 256 KiB
  EXPECT_EQ(points.size(), 1u);
  EXPECT_EQ(unmeasured, 1);
}

TEST(StagedChunk, TableQualityAndFile) {
  const auto rows = joined(at(1 * MiB, {100, 90, 50, 60, 80}), at(256 * KiB, {30, 40, 30}));
  const Table table = build_table({}, 0.05, {}, rows);
  EXPECT_EQ(table.staged_chunk_bytes, 128 * KiB);
  EXPECT_EQ(table.p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes);
  const std::string written = write_tuning_file(table, FileMetadata{});
  EXPECT_NE(written.find("\"staged_chunk_bytes\": 131072"), std::string::npos) << written;
  EXPECT_EQ(build_table({}, 0.05).staged_chunk_bytes, kDefaultStagedChunkBytes);

  QualityReport report = judge_table({}, table, {}, rows);
  EXPECT_EQ(report.chunk_points.size(), 2u);
  EXPECT_DOUBLE_EQ(report.worst, 1.0);
  report = judge_table({}, builtin_table(), {}, rows);  // 1 MiB: unpipelined, 2.0 at 1 MiB
  EXPECT_DOUBLE_EQ(report.worst, 2.0);
  const std::string text = format_quality(report, 1.05);
  EXPECT_NE(text.find("staged allreduce"), std::string::npos) << text;
  EXPECT_NE(text.find("chosen unpipelined"), std::string::npos) << text;
  EXPECT_NE(text.find("worst ratio 2.000 (staged allreduce, 2 ranks, single_node, 1048576 B) over 2 points"),
            std::string::npos)
      << text;
}

TEST(StagedChunk, CsvRoundTrip) {
  const std::string path = ::testing::TempDir() + "/chunk.csv";
  const Measurement collective{CollKind::bcast, 2, Topology::single_node, 8, Backend::mpi, 1.5, 20};
  const auto chunks = at(1 * MiB, {100, 90.5});
  {
    std::ofstream out(path);
    out << measurements_csv_header() << "\n" << to_csv_row(collective) << "\n";
    for (const ChunkMeasurement& m : chunks) out << to_csv_row(m) << "\n";
  }
  EXPECT_EQ(to_csv_row(chunks[0]), "staged_chunk:allreduce,2,single_node,1048576,0,100.000,20");
  EXPECT_EQ(to_csv_row(chunks[1]), "staged_chunk:allreduce,2,single_node,1048576,65536,90.500,20");
  std::vector<Measurement> rows;
  std::vector<ChunkMeasurement> read;
  std::string error;
  ASSERT_TRUE(read_measurements_csv(path, &rows, &error, nullptr, &read)) << error;
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].chunk_bytes, 64 * KiB);
  EXPECT_EQ(read[1].bytes, 1 * MiB);
  EXPECT_DOUBLE_EQ(read[1].latency_us, 90.5);
  // A reader that asks only for collectives gets them, the chunk rows checked and left out.
  rows.clear();
  ASSERT_TRUE(read_measurements_csv(path, &rows, &error)) << error;
  EXPECT_EQ(rows.size(), 1u);
  std::ofstream(path) << "staged_chunk,2,single_node,1048576,64k,1.0,3\n";
  EXPECT_FALSE(read_measurements_csv(path, &rows, &error, nullptr, &read));
  EXPECT_NE(error.find("line 1: bad path \"64k\" (the chunk's bytes for staged_chunk)"), std::string::npos) << error;
}

TEST(StagedChunk, CsvNamesTheCollective) {
  const std::string path = ::testing::TempDir() + "/chunk_kinds.csv";
  const ChunkMeasurement gathered = row(4 * MiB, 1 * MiB, 7.25, CollKind::allgather);
  EXPECT_EQ(to_csv_row(gathered), "staged_chunk:allgather,2,single_node,4194304,1048576,7.250,20");
  // A bare "staged_chunk" (written before the collective was named) is the allreduce.
  std::ofstream(path) << to_csv_row(gathered) << "\nstaged_chunk,2,single_node,1048576,0,3.0,3\n"
                      << "staged_chunk:reduce_scatter_block,2,single_node,1048576,0,4.0,3\n";
  std::vector<Measurement> rows;
  std::vector<ChunkMeasurement> read;
  std::string error;
  ASSERT_TRUE(read_measurements_csv(path, &rows, &error, nullptr, &read)) << error;
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].kind, CollKind::allgather);
  EXPECT_EQ(read[0].chunk_bytes, 1 * MiB);
  EXPECT_EQ(read[1].kind, CollKind::allreduce);
  EXPECT_EQ(read[2].kind, CollKind::reduce_scatter_block);
  for (const char* bad : {"staged_chunk:alltoall", "staged_chunk:nonsense", "staged_chunk:", "staged_chunks"}) {
    std::ofstream(path) << bad << ",2,single_node,1048576,0,3.0,3\n";
    EXPECT_FALSE(read_measurements_csv(path, &rows, &error, nullptr, &read)) << bad;
    EXPECT_NE(error.find("line 1: "), std::string::npos) << error;
  }
}

// Every collective follows the allreduce's chunk unless its own rows choose another by the margin.
TEST(StagedChunk, EachCollectiveGetsItsOwnChunkOnlyWhereItsRowsDiffer) {
  // allreduce: 128 KiB best at both sizes. bcast: 128 KiB too, within 3 %. reduce_scatter_block:
  // unpipelined best by far (chunks cost it 2x). reduce: rows at one size only, 512 KiB best there.
  auto rows = joined(at(1 * MiB, {100, 90, 50, 60, 80}), at(256 * KiB, {30, 40, 30}));
  rows = joined(rows, at(1 * MiB, {100, 90, 51, 50, 80}, CollKind::bcast));
  rows = joined(rows, at(256 * KiB, {30, 40, 30}, CollKind::bcast));
  rows = joined(rows, at(1 * MiB, {50, 100, 100, 100, 100}, CollKind::reduce_scatter_block));
  rows = joined(rows, at(256 * KiB, {20, 40, 40}, CollKind::reduce_scatter_block));
  rows = joined(rows, at(1 * MiB, {100, 90, 80, 70, 40}, CollKind::reduce));
  const StagedChunkChoice choice = choose_staged_chunks(rows, 1 * MiB, 0.05);
  EXPECT_EQ(choice.all, 128 * KiB);
  const auto own = [&](CollKind kind) { return choice.own[static_cast<int>(kind)]; };
  EXPECT_EQ(own(CollKind::allreduce), std::nullopt);
  EXPECT_EQ(own(CollKind::bcast), std::nullopt);  // 51/50: within the margin of every collective's
  EXPECT_EQ(own(CollKind::reduce_scatter_block), 0u);
  EXPECT_EQ(own(CollKind::reduce_scatter), 0u);  // the uneven form of the same pipeline, not timed
  EXPECT_EQ(own(CollKind::reduce), 512 * KiB);
  EXPECT_EQ(own(CollKind::allgather), std::nullopt);  // no rows

  const Table table = build_table({}, 0.05, {}, rows);
  EXPECT_EQ(table.staged_chunk_bytes, 128 * KiB);
  EXPECT_EQ(table.staged_chunk_for(CollKind::allreduce), 128 * KiB);
  EXPECT_EQ(table.staged_chunk_for(CollKind::bcast), 128 * KiB);
  EXPECT_EQ(table.staged_chunk_for(CollKind::allgather), 128 * KiB);
  EXPECT_EQ(table.staged_chunk_for(CollKind::reduce_scatter_block), 0u);
  EXPECT_EQ(table.staged_chunk_for(CollKind::reduce), 512 * KiB);
  const std::string written = write_tuning_file(table, FileMetadata{});
  EXPECT_NE(written.find("\"staged_chunk_bytes_by_collective\": {\n    \"reduce\": 524288,\n    "
                         "\"reduce_scatter\": 0,\n    \"reduce_scatter_block\": 0\n  }"),
            std::string::npos)
      << written;
  const ParsedTable read = parse_tuning_file(written, "t.json");
  ASSERT_TRUE(read.table) << read.error;
  EXPECT_EQ(read.table->own_staged_chunk, table.own_staged_chunk);
  EXPECT_EQ(read.table->hash(), table.hash());

  // The quality figure judges each collective by its own chunk: every point at its best here but
  // bcast's 51/50 at 1 MiB.
  QualityReport report = judge_table({}, table, {}, rows);
  EXPECT_EQ(report.chunk_points.size(), 7u);
  EXPECT_DOUBLE_EQ(report.worst, 51.0 / 50.0);
  EXPECT_EQ(report.unmeasured, 0);
  // With every collective on the allreduce's chunk, reduce_scatter_block reads 2x at both sizes.
  Table shared = table;
  shared.own_staged_chunk = build_table({}, 0.05).own_staged_chunk;
  report = judge_table({}, shared, {}, rows);
  EXPECT_DOUBLE_EQ(report.worst, 2.0);
  const std::string text = format_quality(report, 1.05);
  EXPECT_NE(text.find("staged reduce_scatter_block"), std::string::npos) << text;
  EXPECT_NE(text.find("worst ratio 2.000 (staged reduce, 2 ranks, single_node, 1048576 B) over 7 points"),
            std::string::npos)
      << text;
}

TEST(StagedChunk, WithoutAllreduceRowsEveryCollectiveKeepsTheDefault) {
  const auto rows = joined(at(1 * MiB, {100, 90, 50, 60, 80}, CollKind::allgather),
                           at(1 * MiB, {100, 90, 80, 70, 51}, CollKind::bcast));
  const StagedChunkChoice choice = choose_staged_chunks(rows, 512 * KiB, 0.05);
  EXPECT_EQ(choice.all, std::nullopt);
  EXPECT_EQ(choice.own[static_cast<int>(CollKind::allgather)], 128 * KiB);
  EXPECT_EQ(choice.own[static_cast<int>(CollKind::bcast)], std::nullopt);  // 51 at the default: within 5 %
}

}  // namespace
}  // namespace mcrp::tuning
