// mcrpmpi-tune: measures the staged path's chunk of each pipelined collective, both paths of every routed collective on
// this machine and scale, and the eager limit of device-only point-to-point, and writes a tuning file, a CSV of every
// measurement and an SVG plot; `--quality CSV TABLE` judges a table. On a machine without a GPU it measures on the
// library's fake device when MCRPMPI_FAKE_DEVICE=1 (CI, with the fake NCCL: tests/fake_nccl).
//   mpiexec -n 8 mcrpmpi-tune -o tuning.json --csv tuning.csv --plot tuning.svg
// (under scripts/with-mps when ranks share a GPU: it cannot start the MPS daemon itself, since the
// daemon must run before any rank touches CUDA, so it warns when ranks share a GPU without one)
//   mcrpmpi-tune --quality tuning.csv tuning.json
//   mcrpmpi-tune --from-csv tuning.csv -o tuning.json --margin 0.1   (choose again, measure nothing)
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tuning/selection.h"
#include "tuning/svg_plot.h"
#include "tuning/tune_chunk.h"
#include "tuning/tune_memory.h"
#include "tuning/tune_p2p.h"
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

// Every kind of row of a CSV the suite wrote.
struct CsvRows {
  std::vector<Measurement> collectives;
  std::vector<EagerMeasurement> p2p;
  std::vector<ChunkMeasurement> chunks;
};

// False after saying on stderr what is wrong with the file.
bool read_rows(const std::string& csv, CsvRows* rows) {
  std::string error;
  if (read_measurements_csv(csv, &rows->collectives, &error, &rows->p2p, &rows->chunks)) return true;
  std::fprintf(stderr, "mcrpmpi-tune: %s\n", error.c_str());
  return false;
}

// --quality: exit 0 when the worst ratio meets the goal, 2 when not, 1 on unreadable input.
int report_quality(const std::string& csv, const std::string& table_path, double goal) {
  CsvRows rows;
  if (!read_rows(csv, &rows)) return 1;
  ParsedTable parsed = parse_tuning_file(read_text(table_path), table_path);
  if (!parsed.table) {
    std::fprintf(stderr, "mcrpmpi-tune: %s\n", parsed.error.c_str());
    return 1;
  }
  const QualityReport report = judge_table(rows.collectives, *parsed.table, rows.p2p, rows.chunks);
  std::fputs(format_quality(report, goal).c_str(), stdout);
  return report.worst <= goal ? 0 : 2;
}

// `how`: "written by mcrpmpi-tune on 2 ranks", ...
FileMetadata describe(const std::string& how, double margin) {
  FileMetadata meta;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  meta.machine = host;
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  meta.created = stamp;
  meta.comment = how + ", margin " + std::to_string(margin);
  return meta;
}

// The table chosen from the measurements and the plot, then what the table chose and its quality.
bool write_table(const std::vector<Measurement>& rows, const std::vector<EagerMeasurement>& p2p,
                 const std::vector<ChunkMeasurement>& chunks, const Outputs& outputs, const FileMetadata& meta) {
  const Table table = build_table(rows, outputs.margin, p2p, chunks);
  if (!write_text(outputs.table, write_tuning_file(table, meta)) ||
      !write_text(outputs.plot, plot_svg(rows, table, p2p))) {
    return false;
  }
  std::printf("mcrpmpi-tune: wrote %s, %s\n", outputs.table.c_str(), outputs.plot.c_str());
  if (!p2p.empty()) {
    std::printf("mcrpmpi-tune: p2p eager limit %llu B%s\n", static_cast<unsigned long long>(table.p2p_eager_limit_bytes),
                table.p2p_eager_limit_bytes == kDefaultP2pEagerLimitBytes ? " (the default: not written)" : "");
  }
  if (!chunks.empty()) {
    std::printf("mcrpmpi-tune: staged chunk %llu B%s\n", static_cast<unsigned long long>(table.staged_chunk_bytes),
                table.staged_chunk_bytes == kDefaultStagedChunkBytes ? " (the default: not written)" : "");
    for (int k = 0; k < mcrp::kCollKindCount; ++k) {
      if (table.own_staged_chunk[k] == kNoOwnChunk) continue;
      std::printf("mcrpmpi-tune: staged chunk of %s %llu B\n", mcrp::kind_name(static_cast<mcrp::CollKind>(k)),
                  static_cast<unsigned long long>(table.own_staged_chunk[k]));
    }
  }
  std::fputs(format_quality(judge_table(rows, table, p2p, chunks), 1 + outputs.margin).c_str(), stdout);
  return true;
}

// Rank 0 at the end of a run, its CSV complete (CsvAsMeasured): the table, the plot and the quality
// figure.
bool write_outputs(const std::vector<Measurement>& rows, const std::vector<EagerMeasurement>& p2p,
                   const std::vector<ChunkMeasurement>& chunks, const Outputs& outputs) {
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  return write_table(rows, p2p, chunks, outputs,
                     describe("written by mcrpmpi-tune on " + std::to_string(size) + " ranks", outputs.margin));
}

// --from-csv: the table and plot chosen from a CSV of an earlier run (whole, or cut short: its rows are
// written as they are measured), with this run's --margin. 0, or 1 on unreadable input or output.
int build_from_csv(const std::string& csv, const Outputs& outputs) {
  CsvRows rows;
  if (!read_rows(csv, &rows)) return 1;
  std::printf("mcrpmpi-tune: %zu collective, %zu p2p and %zu staged chunk rows from %s\n", rows.collectives.size(),
              rows.p2p.size(), rows.chunks.size(), csv.c_str());
  const FileMetadata meta = describe("built by mcrpmpi-tune --from-csv " + csv, outputs.margin);
  return write_table(rows.collectives, rows.p2p, rows.chunks, outputs, meta) ? 0 : 1;
}

// Rank 0's CSV, written while the run lasts: the header, then each row as it is measured, flushed, so
// that a run cut short (a time limit, a failure) keeps its measurements for --from-csv. The whole run's
// file is the same: its rows in the order measured.
class CsvAsMeasured {
 public:
  explicit CsvAsMeasured(const std::string& path) : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
    out_ << measurements_csv_header() << "\n" << std::flush;
  }
  void add(const std::string& row) { out_ << row << "\n" << std::flush; }
  // True when every row reached the file; says which way it went.
  bool close() {
    out_.close();
    if (!out_) {
      std::fprintf(stderr, "mcrpmpi-tune: cannot write %s\n", path_.c_str());
      return false;
    }
    std::printf("mcrpmpi-tune: wrote %s\n", path_.c_str());
    return true;
  }

 private:
  std::string path_;
  std::ofstream out_;
};

int tune(TuneOptions options, const Outputs& outputs) {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  const DeviceMemory memory = choose_device_memory(MPI_COMM_WORLD);
  if (memory == DeviceMemory::none) {
    if (rank == 0) std::printf("mcrpmpi-tune: no CUDA device: nothing to tune\n");
  } else if (!libmcrpmpi_loaded()) {
    if (rank == 0) std::fprintf(stderr, "mcrpmpi-tune: libmcrpmpi is not in this process (link or LD_PRELOAD it)\n");
    status = 1;
  } else {
    if (rank == 0 && memory == DeviceMemory::fake_device) {
      std::printf("mcrpmpi-tune: measuring on the library's fake device (MCRPMPI_FAKE_DEVICE=1): host memory, "
                  "figures for testing only\n");
    }
    std::unique_ptr<CsvAsMeasured> csv;
    if (rank == 0) {
      csv = std::make_unique<CsvAsMeasured>(outputs.csv);
      options.on_row = [&csv](const std::string& row) { csv->add(row); };
    }
    // The chunk first: the collectives' staged path is then timed with the chunk the table gets.
    std::vector<ChunkMeasurement> chunks;
    if (options.staged_chunk) chunks = measure_staged_chunk(MPI_COMM_WORLD, options, memory);
    else if (rank == 0) std::printf("staged chunk: skipped (-c does not name staged_chunk)\n");
    use_chosen_chunk(MPI_COMM_WORLD, chunks, outputs.margin);
    const std::vector<Measurement> rows = run_measurements(MPI_COMM_WORLD, options, memory);
    std::vector<EagerMeasurement> p2p;
    if (options.p2p) p2p = measure_eager_limit(MPI_COMM_WORLD, options, memory);
    else if (rank == 0) std::printf("p2p eager limit: skipped (-c does not name p2p)\n");
    if (rank == 0) {
      options.on_row = nullptr;
      const bool csv_written = csv->close();
      status = write_outputs(rows, p2p, chunks, outputs) && csv_written ? 0 : 1;
    }
  }
  PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

// -c: the named collectives, the eager limit when "p2p" is among them and the staged chunk of the
// named collectives whose staged path is pipelined when "staged_chunk" is.
bool choose_kinds(const std::vector<std::string>& names, TuneOptions* options) {
  const std::vector<mcrp::CollKind> measurable = measurable_kinds();
  options->kinds.clear();
  options->p2p = false;
  options->staged_chunk = false;
  for (const std::string& name : names) {
    mcrp::CollKind kind;
    if (name == "p2p") {
      options->p2p = true;
    } else if (name == "staged_chunk") {
      options->staged_chunk = true;
    } else if (mcrp::parse_kind(name.c_str(), &kind) &&
               std::find(measurable.begin(), measurable.end(), kind) != measurable.end()) {
      options->kinds.push_back(kind);
    } else {
      std::fprintf(stderr, "mcrpmpi-tune: cannot measure \"%s\" (measurable:", name.c_str());
      for (mcrp::CollKind k : measurable) std::fprintf(stderr, " %s", mcrp::kind_name(k));
      std::fprintf(stderr, " p2p staged_chunk)\n");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mcrpmpi-tune: measure NCCL and the base MPI on device buffers and write a tuning file"};
  TuneOptions options;
  Outputs outputs;
  std::vector<std::string> kinds;
  std::vector<std::string> quality;
  std::string from_csv;
  double goal = 1.05;
  bool no_sub = false;
  app.add_option("--min-bytes", options.min_bytes, "smallest message (bytes per rank)")->capture_default_str();
  app.add_option("--max-bytes", options.max_bytes, "largest message (bytes per rank)")->capture_default_str();
  app.add_option("-i,--iterations", options.iterations, "timed calls per point (fewer for large messages)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", options.warmup, "untimed calls per point")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--rounds", options.repeat.rounds,
                 "rounds at a point where the two paths are close (--close): each path's median is kept")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--close", options.repeat.close, "close: the slower path within this much of the faster")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("-c,--collectives", kinds,
                 "collectives to measure, p2p for the point-to-point eager limit, staged_chunk for the staged "
                 "path's chunk of those collectives whose staged path is pipelined (default: all)")
      ->delimiter(',');
  app.add_flag("--world-only", no_sub, "measure the world communicator only (no per-node, power-of-two ones)");
  app.add_option("--margin", outputs.margin, "switch path only when the other is this much faster")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("-o,--output", outputs.table, "tuning file to write")->capture_default_str();
  app.add_option("--csv", outputs.csv, "CSV of every measurement")->capture_default_str();
  app.add_option("--plot", outputs.plot, "SVG plot")->capture_default_str();
  app.add_option("--quality", quality, "CSV TABLE: report chosen/best latency per point and the worst ratio")
      ->expected(2);
  app.add_option("--goal", goal, "quality goal for the worst ratio")->capture_default_str();
  app.add_option("--from-csv", from_csv,
                 "CSV of an earlier run (also one cut short): choose with --margin and write -o and --plot, "
                 "measuring nothing")
      ->excludes("--quality");
  CLI11_PARSE(app, argc, argv);
  if (!quality.empty()) return report_quality(quality[0], quality[1], goal);
  if (!from_csv.empty()) return build_from_csv(from_csv, outputs);
  if (options.min_bytes > options.max_bytes) {
    std::fprintf(stderr, "mcrpmpi-tune: --min-bytes is above --max-bytes\n");
    return 1;
  }
  if (!kinds.empty() && !choose_kinds(kinds, &options)) return 1;
  options.sub_communicators = !no_sub;
  return tune(options, outputs);
}
