// mcrpmpi-tune: measures both paths of every routed collective on this machine and scale and writes
// a tuning file, a CSV of every measurement and an SVG plot; `--quality CSV TABLE` judges a table.
//   mpiexec -n 8 mcrpmpi-tune -o tuning.json --csv tuning.csv --plot tuning.svg
// (under scripts/with-mps when ranks share a GPU: it cannot start the MPS daemon itself, since the
// daemon must run before any rank touches CUDA, so it warns when ranks share a GPU without one)
//   mcrpmpi-tune --quality tuning.csv tuning.json
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tuning/selection.h"
#include "tuning/svg_plot.h"
#include "tuning/tune_run.h"
#include "tuning/tuning_file.h"

namespace {

using namespace mcrp::tuning;

struct Outputs {
  std::string table = "mcrpmpi-tuning.json";
  std::string csv = "mcrpmpi-tuning.csv";
  std::string plot = "mcrpmpi-tuning.svg";
  double margin = 0.05;
};

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) std::fprintf(stderr, "mcrpmpi-tune: cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --quality: exit 0 when the worst ratio meets the goal, 2 when not, 1 on unreadable input.
int report_quality(const std::string& csv, const std::string& table_path, double goal) {
  std::vector<Measurement> rows;
  std::string error;
  if (!read_measurements_csv(csv, &rows, &error)) {
    std::fprintf(stderr, "mcrpmpi-tune: %s\n", error.c_str());
    return 1;
  }
  ParsedTable parsed = parse_tuning_file(read_text(table_path), table_path);
  if (!parsed.table) {
    std::fprintf(stderr, "mcrpmpi-tune: %s\n", parsed.error.c_str());
    return 1;
  }
  const QualityReport report = judge_table(rows, *parsed.table);
  std::fputs(format_quality(report, goal).c_str(), stdout);
  return report.worst <= goal ? 0 : 2;
}

// Ranks sharing a GPU without the MPS daemon time-slice it, so every small GPU step costs milliseconds
// of context switching and the table would be tuned to that. Said once per node.
void warn_if_sharing_without_mps(int node_ranks, int local_rank, int gpus) {
  if (local_rank != 0 || node_ranks <= gpus) return;
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control = std::string(pipe != nullptr && pipe[0] != '\0' ? pipe : "/tmp/nvidia-mps") + "/control";
  if (access(control.c_str(), F_OK) == 0) return;
  std::fprintf(stderr,
               "mcrpmpi-tune: warning: %d ranks share %d GPU(s) on this node without the CUDA MPS daemon; their "
               "GPU work is time-sliced and small calls measure milliseconds. Run it as scripts/with-mps -- "
               "mpiexec ... mcrpmpi-tune (README, \"Tuning\").\n",
               node_ranks, gpus);
}

bool every_rank_has_a_gpu(MPI_Comm world) {
  int count = 0;
  int mine = cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, world);
  if (mine) {
    // One device per rank on a node, round robin, before anything touches the GPU.
    MPI_Comm node;
    PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local = 0, node_ranks = 0;
    PMPI_Comm_rank(node, &local);
    PMPI_Comm_size(node, &node_ranks);
    PMPI_Comm_free(&node);
    cudaSetDevice(local % count);
    warn_if_sharing_without_mps(node_ranks, local, count);
  }
  return all == 1;
}

FileMetadata describe_run(MPI_Comm world, double margin) {
  FileMetadata meta;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  int size = 0;
  PMPI_Comm_size(world, &size);
  meta.machine = host;
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  meta.created = stamp;
  meta.comment = "written by mcrpmpi-tune on " + std::to_string(size) + " ranks, margin " + std::to_string(margin);
  return meta;
}

int tune(const TuneOptions& options, const Outputs& outputs) {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  if (!every_rank_has_a_gpu(MPI_COMM_WORLD)) {
    if (rank == 0) std::printf("mcrpmpi-tune: no CUDA device: nothing to tune\n");
  } else if (!libmcrpmpi_loaded()) {
    if (rank == 0) std::fprintf(stderr, "mcrpmpi-tune: libmcrpmpi is not in this process (link or LD_PRELOAD it)\n");
    status = 1;
  } else {
    const std::vector<Measurement> rows = run_measurements(MPI_COMM_WORLD, options);
    if (rank == 0) {
      Table table = build_table(rows, outputs.margin);
      std::string csv = measurements_csv_header() + "\n";
      for (const Measurement& m : rows) csv += to_csv_row(m) + "\n";
      const bool written = write_text(outputs.table, write_tuning_file(table, describe_run(MPI_COMM_WORLD, outputs.margin))) &&
                           write_text(outputs.csv, csv) && write_text(outputs.plot, plot_svg(rows, table));
      status = written ? 0 : 1;
      if (written) {
        std::printf("mcrpmpi-tune: wrote %s, %s, %s\n", outputs.table.c_str(), outputs.csv.c_str(), outputs.plot.c_str());
        std::fputs(format_quality(judge_table(rows, table), 1 + outputs.margin).c_str(), stdout);
      }
    }
  }
  PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mcrpmpi-tune: measure NCCL and the base MPI on device buffers and write a tuning file"};
  TuneOptions options;
  Outputs outputs;
  std::vector<std::string> kinds;
  std::vector<std::string> quality;
  double goal = 1.05;
  bool no_sub = false;
  app.add_option("--min-bytes", options.min_bytes, "smallest message (bytes per rank)")->capture_default_str();
  app.add_option("--max-bytes", options.max_bytes, "largest message (bytes per rank)")->capture_default_str();
  app.add_option("-i,--iterations", options.iterations, "timed calls per point (fewer for large messages)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", options.warmup, "untimed calls per point")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("-c,--collectives", kinds, "collectives to measure (default: all measurable)")->delimiter(',');
  app.add_flag("--world-only", no_sub, "measure the world communicator only (no per-node, power-of-two ones)");
  app.add_option("--margin", outputs.margin, "switch path only when the other is this much faster")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("-o,--output", outputs.table, "tuning file to write")->capture_default_str();
  app.add_option("--csv", outputs.csv, "CSV of every measurement")->capture_default_str();
  app.add_option("--plot", outputs.plot, "SVG plot")->capture_default_str();
  app.add_option("--quality", quality, "CSV TABLE: report chosen/best latency per point and the worst ratio")
      ->expected(2);
  app.add_option("--goal", goal, "quality goal for the worst ratio")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!quality.empty()) return report_quality(quality[0], quality[1], goal);
  if (options.min_bytes > options.max_bytes) {
    std::fprintf(stderr, "mcrpmpi-tune: --min-bytes is above --max-bytes\n");
    return 1;
  }
  for (const std::string& name : kinds) {
    mcrp::CollKind kind;
    const std::vector<mcrp::CollKind> measurable = measurable_kinds();
    if (!mcrp::parse_kind(name.c_str(), &kind) ||
        std::find(measurable.begin(), measurable.end(), kind) == measurable.end()) {
      std::fprintf(stderr, "mcrpmpi-tune: cannot measure collective \"%s\" (measurable:", name.c_str());
      for (mcrp::CollKind k : measurable) std::fprintf(stderr, " %s", mcrp::kind_name(k));
      std::fprintf(stderr, ")\n");
      return 1;
    }
    options.kinds.push_back(kind);
  }
  options.sub_communicators = !no_sub;
  return tune(options, outputs);
}
