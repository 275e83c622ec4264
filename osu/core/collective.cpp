#include "osu/core/collective.h"

#include <cstdio>
#include <string>
#include <vector>

#include "osu/core/element.h"
#include "osu/core/gpu.h"
#include "osu/core/report.h"
#include "osu/core/session.h"
#include "osu/core/shape.h"
#include "osu/core/stats.h"

namespace osu {
namespace {

constexpr double kMicro = 1e6;
constexpr int kRoot = 0;  // OSU's rooted benchmarks use rank 0

// One benchmark run: its buffers (allocated once for the largest size) and the steps around a call.
class Bench {
 public:
  Bench(const CollectiveSpec& spec, const Options& opt, const Element& elem, int rank, int ranks)
      : spec_(spec), opt_(opt), elem_(elem), rank_(rank), ranks_(ranks),
        send_(opt.memory, bytes(layout_at(opt.max_size / elem.size).send)),
        recv_(opt.memory, bytes(layout_at(opt.max_size / elem.size).recv)),
        counts_(static_cast<std::size_t>(ranks)), displs_(static_cast<std::size_t>(ranks)),
        corrupt_(corrupt_results_requested() && rank == 0) {}

  CallArgs args(std::size_t n) {
    for (int r = 0; r < ranks_; ++r) {
      counts_[static_cast<std::size_t>(r)] = static_cast<int>(n);
      displs_[static_cast<std::size_t>(r)] = static_cast<int>(n) * r;
    }
    return CallArgs{send_.data(), recv_.data(), static_cast<int>(n), elem_.type, MPI_COMM_WORLD, kRoot,
                    counts_.data(), displs_.data()};
  }

  void fill(std::size_t n, int salt) {
    Layout l = layout_at(n);
    for (std::size_t j = 0; j < l.send; ++j) elem_.store(send_.host(), j, input(rank_, j, salt));
    for (std::size_t j = 0; j < l.recv; ++j)
      elem_.store(recv_.host(), j, initial_receive(spec_.shape, j, rank_, kRoot, salt));
    send_.push(bytes(l.send));
    recv_.push(bytes(l.recv));
  }

  bool check(std::size_t n, int salt) {
    Layout l = layout_at(n);
    recv_.pull(bytes(l.recv));
    if (corrupt_ && l.checked > 0) elem_.store(recv_.host(), 0, elem_.load(recv_.host(), 0) + 1);
    for (std::size_t j = 0; j < l.checked; ++j) {
      long want = expected(spec_.shape, j, n, rank_, ranks_, kRoot, salt);
      long got = elem_.load(recv_.host(), j);
      if (got != want) {
        std::fprintf(stderr, "# rank %d: %s element %zu of %zu is %ld, expected %ld\n", rank_, spec_.name,
                     j, n, got, want);
        return false;
      }
    }
    return true;
  }

  // Runs warm-up and timed iterations of `op` (which returns its own duration in seconds) with a
  // barrier after each, as OSU does; under -c every iteration gets fresh inputs and is checked.
  template <typename Op>
  double mean_seconds(std::size_t n, int iterations, int warmup, Op op, bool* valid) {
    fill(n, 0);
    double total = 0;
    for (int i = 0; i < warmup + iterations; ++i) {
      if (opt_.validate) fill(n, i);
      double t = op(args(n));
      if (i >= warmup) total += t;
      if (opt_.validate && !check(n, i)) *valid = false;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    return iterations > 0 ? total / iterations : 0.0;
  }

 private:
  Layout layout_at(std::size_t n) const { return layout(spec_.shape, n, rank_, ranks_, kRoot); }
  std::size_t bytes(std::size_t elements) const { return elements * elem_.size; }

  const CollectiveSpec& spec_;
  const Options& opt_;
  const Element& elem_;
  int rank_, ranks_;
  Buffer send_, recv_;
  std::vector<int> counts_, displs_;
  bool corrupt_;
};

double time_blocking(const CollectiveSpec& spec, const CallArgs& a) {
  double t0 = MPI_Wtime();
  spec.call(a);
  return MPI_Wtime() - t0;
}

double time_nonblocking(const CollectiveSpec& spec, const CallArgs& a) {
  double t0 = MPI_Wtime();
  MPI_Request req = spec.start(a);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

// The figures of one size: OSU's average latency, or for nonblocking collectives its overlap
// measurement (pure communication first, then the same with as much compute as it took).
std::vector<double> measure(Bench& b, const CollectiveSpec& spec, const Options& opt, std::size_t size,
                            std::size_t n, bool* valid) {
  const int iters = opt.iterations_for(size), warmup = opt.warmup_for(size);
  if (!spec.start) {
    Spread lat = spread(
        kMicro * b.mean_seconds(n, iters, warmup, [&](const CallArgs& a) { return time_blocking(spec, a); },
                                valid),
        MPI_COMM_WORLD);
    std::vector<double> figures{lat.avg};
    if (opt.full_stats) figures.insert(figures.end(), {lat.min, lat.max});
    if (spec.bandwidth) {
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      Traffic t = traffic(spec.shape, size, ranks);
      double algbw = lat.avg > 0 ? t.alg_bytes / (lat.avg * 1e3) : 0;  // bytes/us/1e3 = GB/s
      figures.insert(figures.end(), {algbw, algbw * t.bus_factor});
    }
    return figures;
  }
  double pure = b.mean_seconds(n, iters, warmup, [&](const CallArgs& a) { return time_nonblocking(spec, a); },
                               valid);
  double compute_total = 0;
  double overall = b.mean_seconds(
      n, iters, warmup,
      [&](const CallArgs& a) {
        double t0 = MPI_Wtime();
        MPI_Request req = spec.start(a);
        double c0 = MPI_Wtime();
        spin_for(pure);
        compute_total += MPI_Wtime() - c0;
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return MPI_Wtime() - t0;
      },
      valid);
  double compute = compute_total / (warmup + iters);
  Spread p = spread(kMicro * pure, MPI_COMM_WORLD);
  Spread o = spread(kMicro * overall, MPI_COMM_WORLD);
  Spread c = spread(kMicro * compute, MPI_COMM_WORLD);
  double overlap = p.avg > 0 ? 100.0 - 100.0 * (o.avg - c.avg) / p.avg : 0.0;
  overlap = overlap < 0 ? 0 : (overlap > 100 ? 100 : overlap);
  if (opt.full_stats) return {o.avg, c.avg, p.avg, p.min, p.max, overlap};
  return {o.avg, c.avg, p.avg, overlap};
}

std::vector<std::string> figure_names(const CollectiveSpec& spec, const Options& opt) {
  if (!spec.start) {
    std::vector<std::string> names{"Avg Latency(us)"};
    if (opt.full_stats) names.insert(names.end(), {"Min Latency(us)", "Max Latency(us)"});
    if (spec.bandwidth) names.insert(names.end(), {"algbw(GB/s)", "busbw(GB/s)"});
    return names;
  }
  if (opt.full_stats)
    return {"Overall(us)", "Compute(us)", "Pure Comm.(us)", "Min Comm.(us)", "Max Comm.(us)", "Overlap(%)"};
  return {"Overall(us)", "Compute(us)", "Pure Comm.(us)", "Overlap(%)"};
}

const Element* choose_element(const CollectiveSpec& spec, const Options& opt, int rank) {
  const bool reduction = is_reduction(spec.shape);
  std::string name = opt.datatype.empty() ? (reduction ? "float" : "char") : opt.datatype;
  const Element* e = find_element(name);
  const char* problem = nullptr;
  if (!e) problem = "unknown datatype (want char, int, float or double)";
  else if (reduction && e->size == 1) problem = "char is too narrow for the sums a reduction checks";
  if (problem && rank == 0) std::fprintf(stderr, "osu: -T %s: %s\n", name.c_str(), problem);
  return problem ? nullptr : e;
}

}  // namespace

int run_collective(int argc, char** argv, const CollectiveSpec& spec) {
  MpiSession mpi(&argc, &argv);
  Options opt;
  if (int code = mpi.prepare(argc, argv, &opt, spec.device_only);
      code >= 0)
    return code;
  const Element* elem = choose_element(spec, opt, mpi.rank());
  if (!elem) return 1;
  const bool sized = spec.shape != Shape::none;
  const std::string kind = spec.start ? "Non-blocking " : "";
  print_title(mpi.rank(), kind + spec.name + " Latency Test", opt.memory, sized ? elem : nullptr);
  print_columns(mpi.rank(), sized, figure_names(spec, opt), opt);

  if (spec.setup) spec.setup(MPI_COMM_WORLD);
  Bench bench(spec, opt, *elem, mpi.rank(), mpi.size());
  bool all_valid = true;
  std::size_t first = opt.min_given ? opt.min_size : (is_reduction(spec.shape) ? elem->size : 1);
  for (std::size_t size = sized ? first : 0; size <= (sized ? opt.max_size : 0); size = size ? size * 2 : 1) {
    if (size % elem->size != 0) continue;  // a reduction's message is whole elements
    bool valid = true;
    Row row;
    row.sized = sized;
    row.size = size;
    row.figures = measure(bench, spec, opt, size, size / elem->size, &valid);
    row.iterations = opt.iterations_for(size);
    row.valid = all_true(valid, MPI_COMM_WORLD);
    all_valid = all_valid && row.valid;
    print_row(mpi.rank(), row, opt);
  }
  if (spec.teardown) spec.teardown();
  return all_valid ? 0 : 1;
}

}  // namespace osu
