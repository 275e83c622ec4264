// The suite's offline logic on synthetic measurements: CSV reading, measurements -> ranges with a
// margin against flip-flopping, the quality figure, and the SVG plot.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/tuning/tuning_test_support.h"
#include "tuning/selection.h"
#include "tuning/svg_plot.h"
#include "tuning/tuning_file.h"

namespace mcrp::tuning {
namespace {

std::vector<Measurement> synthetic() {
  std::vector<Measurement> rows;
  std::string error;
  EXPECT_TRUE(read_measurements_csv(std::string(MCRPMPI_TUNING_TEST_DATA) + "/synthetic.csv", &rows, &error)) << error;
  return rows;
}

TEST(MeasurementsCsv, ReadsEveryRow) {
  const auto rows = synthetic();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[1].backend, Backend::mpi);
  EXPECT_EQ(rows[1].bytes, 1024u);
  EXPECT_DOUBLE_EQ(rows[2].latency_us, 10.3);
  EXPECT_EQ(rows[8].kind, CollKind::bcast);
  EXPECT_EQ(rows[8].topology, Topology::multi_node);
  EXPECT_EQ(to_csv_row(rows[2]), "allreduce,4,single_node,2048,nccl,10.300,100");
}

TEST(MeasurementsCsv, BadRowNamesItsLine) {
  const std::string path = ::testing::TempDir() + "/bad.csv";
  std::ofstream(path) << measurements_csv_header() << "\nallreduce,4,single_node,8,nccl,1.0,3\nallreduce,4,single_node,8x,mpi,1.0,3\n";
  std::vector<Measurement> rows;
  std::string error;
  EXPECT_FALSE(read_measurements_csv(path, &rows, &error));
  EXPECT_NE(error.find("line 3: bad bytes \"8x\""), std::string::npos) << error;
  EXPECT_FALSE(read_measurements_csv(path + ".missing", &rows, &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST(Selection, MarginKeepsNearTiesOnTheCurrentPath) {
  const Table t = build_table(synthetic(), 0.05);
  const auto& rules = t.per_kind[static_cast<int>(CollKind::allreduce)];
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].min_comm_size, 4);
  EXPECT_EQ(rules[0].topology, Topology::single_node);
  // mpi at 1 KiB, stays mpi at 2 KiB (nccl only 3 % slower), nccl from 4 KiB, and stays nccl at
  // 8 KiB although mpi is 2 % faster there.
  ASSERT_EQ(rules[0].ranges.size(), 2u);
  EXPECT_EQ(rules[0].ranges[0].backend, Backend::mpi);
  EXPECT_EQ(rules[0].ranges[0].lo, 0u);
  EXPECT_EQ(rules[0].ranges[0].hi, 4096u);
  EXPECT_EQ(rules[0].ranges[1].backend, Backend::nccl);
  EXPECT_EQ(rules[0].ranges[1].hi, kUnknownSize);
  // Without a margin the table follows every winner.
  EXPECT_EQ(build_table(synthetic(), 0.0).per_kind[static_cast<int>(CollKind::allreduce)][0].ranges.size(), 3u);
}

TEST(Selection, BuiltTableIsAValidTuningFile) {
  const Table t = build_table(synthetic(), 0.05);
  ParsedTable parsed = parse_tuning_file(write_tuning_file(t, FileMetadata{}), "built");
  ASSERT_TRUE(parsed.table) << parsed.error;
  EXPECT_EQ(parsed.table->hash(), t.hash());
}

TEST(Selection, OnlyMeasuredPathIsChosen) {
  std::vector<Measurement> rows = {{CollKind::scan, 2, Topology::single_node, 8, Backend::mpi, 3.0, 1},
                                   {CollKind::scan, 2, Topology::single_node, 16, Backend::nccl, 9.0, 1}};
  const Table t = build_table(rows, 0.05);
  const auto& r = t.per_kind[static_cast<int>(CollKind::scan)][0].ranges;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].backend, Backend::mpi);
  EXPECT_EQ(r[1].backend, Backend::nccl);
  EXPECT_EQ(r[1].lo, 16u);
}

TEST(Quality, WorstRatioIsWithinTheMargin) {
  const auto rows = synthetic();
  const QualityReport report = judge_table(rows, build_table(rows, 0.05));
  ASSERT_EQ(report.points.size(), 5u);
  EXPECT_EQ(report.unmeasured, 0);
  // 8 KiB stays on nccl (9.5 us) although mpi takes 9.3: within the margin.
  EXPECT_NEAR(report.worst, 9.5 / 9.3, 1e-9);
  const std::string text = format_quality(report, 1.05);
  EXPECT_NE(text.find("worst ratio 1.022 (allreduce, 4 ranks, single_node, 8192 B) over 5 points; goal <= 1.05: met"),
            std::string::npos)
      << text;
}

TEST(Quality, BuiltInTableIsJudgedHonestly) {
  // All-NCCL: at 1 KiB nccl takes 20 us where mpi takes 10.
  const QualityReport report = judge_table(synthetic(), builtin_table());
  EXPECT_NEAR(report.worst, 2.0, 1e-9);
  EXPECT_NE(format_quality(report, 1.05).find("NOT met"), std::string::npos);
  EXPECT_NE(format_quality(QualityReport{}, 1.05).find("no measured points"), std::string::npos);
}

TEST(Plot, HasOnePanelPerGroupAndBothPaths) {
  const auto rows = synthetic();
  const std::string svg = plot_svg(rows, build_table(rows, 0.05));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("allreduce, 4 ranks, single_node"), std::string::npos);
  EXPECT_NE(svg.find("bcast, 8 ranks, multi_node"), std::string::npos);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 4u);
  EXPECT_NE(plot_svg({}, builtin_table()).find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace mcrp::tuning
