// Choosing the eager limit of device-only point-to-point from synthetic ping-pong rows: the margin,
// the contiguous range from the smallest size, missing points; its place in the table, the tuning
// file, the CSV, the quality figure and the plot.
#include <gtest/gtest.h>

#include <fstream>

#include "tuning/eager_limit.h"
#include "tuning/selection.h"
#include "tuning/svg_plot.h"
#include "tuning/tuning_file.h"

namespace mcrp::tuning {
namespace {

constexpr P2pProtocol kInline = P2pProtocol::inline_payload;
constexpr P2pProtocol kRendezvous = P2pProtocol::rendezvous;

EagerMeasurement row(std::uint64_t bytes, P2pProtocol protocol, double us) {
  return EagerMeasurement{2, Topology::single_node, bytes, protocol, us, 20};
}

// Both protocols at sizes 8, 16, 32, ... with the given latencies (inline[i], rendezvous[i]).
std::vector<EagerMeasurement> ping_pong(const std::vector<double>& inline_us, const std::vector<double>& rendezvous_us) {
  std::vector<EagerMeasurement> rows;
  std::uint64_t bytes = 8;
  for (std::size_t i = 0; i < inline_us.size(); ++i, bytes *= 2) {
    rows.push_back(row(bytes, kInline, inline_us[i]));
    rows.push_back(row(bytes, kRendezvous, rendezvous_us[i]));
  }
  return rows;
}

TEST(EagerLimit, LastSizeWhereInlineIsNotSlower) {
  // Inline wins up to 32 B, ties at 64 B (kept), loses from 128 B.
  const auto rows = ping_pong({2, 2, 3, 5, 9, 17}, {8, 8, 8, 5, 8, 9});
  EXPECT_EQ(choose_eager_limit(rows, 0.05), 64u);
  EXPECT_EQ(choose_eager_limit(rows, 0.0), 64u);
}

TEST(EagerLimit, MarginKeepsInlineThroughNearTies) {
  // At 32 B inline is 4 % slower: kept with a 5 % margin, not without one.
  const auto rows = ping_pong({2, 2, 10.4, 21}, {8, 8, 10, 10});
  EXPECT_EQ(choose_eager_limit(rows, 0.05), 32u);
  EXPECT_EQ(choose_eager_limit(rows, 0.0), 16u);
  EXPECT_EQ(choose_eager_limit(rows, 1.0), 32u);  // 21 > 2 x 10 at 64 B
}

TEST(EagerLimit, ContiguousFromTheSmallestSize) {
  // Inline loses at 16 B and wins again at 32 B and above: the limit stops at 8 B.
  const auto rows = ping_pong({2, 9, 3, 3}, {5, 5, 5, 5});
  EXPECT_EQ(choose_eager_limit(rows, 0.05), 8u);
}

TEST(EagerLimit, ZeroWhenInlineLosesAtTheSmallestSize) {
  EXPECT_EQ(choose_eager_limit(ping_pong({9, 9, 9}, {5, 5, 5}), 0.05), 0u);
}

TEST(EagerLimit, LargestMeasuredSizeWhenInlineAlwaysWins) {
  EXPECT_EQ(choose_eager_limit(ping_pong({1, 1, 1, 1, 1}, {5, 5, 5, 5, 5}), 0.05), 128u);
  // One size, in any row order.
  EXPECT_EQ(choose_eager_limit({row(4096, kRendezvous, 5), row(4096, kInline, 1)}, 0.05), 4096u);
}

TEST(EagerLimit, MissingPointsEndTheWalk) {
  EXPECT_EQ(choose_eager_limit({}, 0.05), std::nullopt);
  // Only inline at 8 B: nothing to compare with.
  EXPECT_EQ(choose_eager_limit({row(8, kInline, 1), row(16, kInline, 1), row(16, kRendezvous, 5)}, 0.05), std::nullopt);
  // 32 B lacks rendezvous (a failed run): the limit stays at 16 B although 64 B would allow more.
  auto rows = ping_pong({1, 1, 1, 1}, {5, 5, 5, 5});
  rows.erase(rows.begin() + 5);  // 32 B, rendezvous
  EXPECT_EQ(choose_eager_limit(rows, 0.05), 16u);
}

TEST(EagerLimit, LaterRowOfASizeCounts) {
  auto rows = ping_pong({1, 1}, {5, 5});
  rows.push_back(row(16, kInline, 50));  // a remeasurement: inline now loses at 16 B
  EXPECT_EQ(choose_eager_limit(rows, 0.05), 8u);
}

TEST(EagerLimit, BuildTableWritesTheChosenLimit) {
  const auto rows = ping_pong({2, 2, 3, 9}, {8, 8, 8, 8});
  const Table table = build_table({}, 0.05, rows);
  EXPECT_EQ(table.p2p_eager_limit_bytes, 32u);
  const std::string written = write_tuning_file(table, FileMetadata{});
  EXPECT_NE(written.find("\"p2p_eager_limit_bytes\": 32"), std::string::npos) << written;
  ParsedTable parsed = parse_tuning_file(written, "built");
  ASSERT_TRUE(parsed.table) << parsed.error;
  EXPECT_EQ(parsed.table->p2p_eager_limit_bytes, 32u);
  // No rows, or none comparable: the default, which the file leaves out.
  EXPECT_EQ(build_table({}, 0.05).p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes);
  EXPECT_EQ(build_table({}, 0.05, {row(8, kInline, 1)}).p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes);
  // Inline losing everywhere writes 0 (every non-empty payload by rendezvous).
  EXPECT_EQ(build_table({}, 0.05, ping_pong({9}, {1})).p2p_eager_limit_bytes, 0u);
}

TEST(EagerLimit, QualityJudgesTheTablesLimit) {
  const auto rows = ping_pong({2, 2, 3, 9}, {8, 8, 8, 6});
  Table table = build_table({}, 0.05, rows);  // 32 B
  QualityReport report = judge_table({}, table, rows);
  ASSERT_EQ(report.p2p_points.size(), 4u);
  EXPECT_EQ(report.p2p_points[2].chosen.protocol, kInline);
  EXPECT_EQ(report.p2p_points[3].chosen.protocol, kRendezvous);
  EXPECT_DOUBLE_EQ(report.worst, 1.0);
  // The built-in 64 KiB sends 64 B inline: 9 us where rendezvous takes 6.
  report = judge_table({}, builtin_table(), rows);
  EXPECT_DOUBLE_EQ(report.worst, 1.5);
  const std::string text = format_quality(report, 1.05);
  EXPECT_NE(text.find("worst ratio 1.500 (p2p eager limit, 2 ranks, single_node, 64 B) over 4 points; goal <= 1.05: NOT met"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("chosen inline"), std::string::npos) << text;
  // A size where the chosen protocol was not measured is counted, not judged.
  report = judge_table({}, table, {row(8, kRendezvous, 1), row(64, kRendezvous, 1)});
  EXPECT_EQ(report.p2p_points.size(), 1u);
  EXPECT_EQ(report.unmeasured, 1);
}

TEST(EagerLimit, CsvRowsReadBackBesideCollectiveRows) {
  const std::string path = ::testing::TempDir() + "/p2p.csv";
  const Measurement collective{CollKind::bcast, 2, Topology::single_node, 8, Backend::mpi, 1.5, 20};
  const auto p2p = ping_pong({1.25, 2}, {3, 4});
  {
    std::ofstream out(path);
    out << measurements_csv_header() << "\n" << to_csv_row(collective) << "\n";
    for (const EagerMeasurement& m : p2p) out << to_csv_row(m) << "\n";
  }
  EXPECT_EQ(to_csv_row(p2p[0]), "p2p,2,single_node,8,inline,1.250,20");
  EXPECT_EQ(to_csv_row(p2p[3]), "p2p,2,single_node,16,rendezvous,4.000,20");
  std::vector<Measurement> rows;
  std::vector<EagerMeasurement> read;
  std::string error;
  ASSERT_TRUE(read_measurements_csv(path, &rows, &error, &read)) << error;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, CollKind::bcast);
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(read[3].protocol, kRendezvous);
  EXPECT_EQ(read[3].bytes, 16u);
  EXPECT_DOUBLE_EQ(read[0].latency_us, 1.25);
  // A reader that asks only for collectives gets them, the p2p rows checked and left out.
  rows.clear();
  ASSERT_TRUE(read_measurements_csv(path, &rows, &error)) << error;
  EXPECT_EQ(rows.size(), 1u);
}

TEST(EagerLimit, BadP2pRowNamesItsLine) {
  const std::string path = ::testing::TempDir() + "/bad-p2p.csv";
  std::ofstream(path) << measurements_csv_header() << "\np2p,2,single_node,8,inline,1.0,3\np2p,2,single_node,8,nccl,1.0,3\n";
  std::vector<Measurement> rows;
  std::vector<EagerMeasurement> p2p;
  std::string error;
  EXPECT_FALSE(read_measurements_csv(path, &rows, &error, &p2p));
  EXPECT_NE(error.find("line 3: bad path \"nccl\" (inline or rendezvous for p2p)"), std::string::npos) << error;
  std::ofstream(path) << "p2p,2,single_node,8x,inline,1.0,3\n";
  EXPECT_FALSE(read_measurements_csv(path, &rows, &error));
  EXPECT_NE(error.find("line 1: bad bytes \"8x\""), std::string::npos) << error;
  std::ofstream(path) << "allreduce,2,single_node,8,inline,1.0,3\n";
  EXPECT_FALSE(read_measurements_csv(path, &rows, &error));
  EXPECT_NE(error.find("line 1: bad path \"inline\" (nccl or mpi)"), std::string::npos) << error;
}

TEST(EagerLimit, PlotHasAnEagerLimitPanel) {
  const auto p2p = ping_pong({2, 2, 9}, {8, 8, 8});
  const std::string svg = plot_svg({}, build_table({}, 0.05, p2p), p2p);
  EXPECT_NE(svg.find("p2p eager limit 16 B, 2 ranks, single_node"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">inline</text>"), std::string::npos);
  EXPECT_NE(svg.find(">rendezvous</text>"), std::string::npos);
  EXPECT_EQ(plot_svg({}, builtin_table()).find("p2p eager limit"), std::string::npos);
}

}  // namespace
}  // namespace mcrp::tuning
