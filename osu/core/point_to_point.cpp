#include "osu/core/point_to_point.h"

#include <mpi.h>

#include <cstdio>
#include <vector>

#include "osu/core/element.h"
#include "osu/core/gpu.h"
#include "osu/core/report.h"
#include "osu/core/session.h"
#include "osu/core/stats.h"

namespace osu {
namespace {

constexpr int kTag = 1;
constexpr double kMega = 1e6;

// One pair's buffers and the exchanges between its two ranks (world ranks `rank` and `peer`; the
// initiator starts ping-pongs and sends windows). Messages are bytes (MPI_CHAR).
class Pair {
 public:
  Pair(const Options& opt, int rank, int peer, bool initiator)
      : opt_(opt), rank_(rank), peer_(peer), initiator_(initiator), send_(opt.memory, opt.max_size),
        recv_(opt.memory, opt.max_size), corrupt_(corrupt_results_requested()),
        requests_(2 * static_cast<std::size_t>(opt.window)) {}

  // Rank r sends input(r, j, salt); the receiver checks it came across intact. (Both ranks of the pair
  // spoil what they check under OSU_CORRUPT_RESULT: in osu_bw only rank 1 checks.)
  void fill(std::size_t size, int salt) {
    for (std::size_t j = 0; j < size; ++j) {
      element().store(send_.host(), j, input(rank_, j, salt));
      element().store(recv_.host(), j, kSentinel);
    }
    send_.push(size);
    recv_.push(size);
  }

  bool check(std::size_t size, int salt, int sender) {
    recv_.pull(size);
    if (corrupt_ && size > 0) element().store(recv_.host(), 0, element().load(recv_.host(), 0) + 1);
    for (std::size_t j = 0; j < size; ++j) {
      if (element().load(recv_.host(), j) != input(sender, j, salt)) {
        std::fprintf(stderr, "# rank %d: byte %zu of %zu from rank %d is wrong\n", rank_, j, size, sender);
        return false;
      }
    }
    return true;
  }

  // One ping-pong; the peer echoes the initiator's message, so both check data from the initiator.
  void ping_pong(std::size_t size) {
    int n = static_cast<int>(size);
    if (initiator_) {
      MPI_Send(send_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD);
      MPI_Recv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD);
    }
  }

  // One window of messages: from the initiator (both = false) or both ways, closed by a short reply.
  void window(std::size_t size, bool both) {
    int n = static_cast<int>(size);
    std::size_t posted = 0;
    for (int w = 0; w < opt_.window; ++w) {
      if (!initiator_ || both)
        MPI_Irecv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, &requests_[posted++]);
      if (initiator_ || both)
        MPI_Isend(send_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, &requests_[posted++]);
    }
    MPI_Waitall(static_cast<int>(posted), requests_.data(), MPI_STATUSES_IGNORE);
    char ack = 0;
    if (initiator_) MPI_Recv(&ack, 1, MPI_CHAR, peer_, kTag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else MPI_Send(&ack, 1, MPI_CHAR, peer_, kTag + 1, MPI_COMM_WORLD);
  }

  int peer() const { return peer_; }
  bool initiator() const { return initiator_; }

 private:
  static const Element& element() { return *find_element("char"); }

  const Options& opt_;
  int rank_, peer_;
  bool initiator_;
  Buffer send_, recv_;
  bool corrupt_;
  std::vector<MPI_Request> requests_;
};

const char* title(PointToPoint kind) {
  switch (kind) {
    case PointToPoint::latency: return "Latency Test";
    case PointToPoint::bandwidth: return "Bandwidth Test";
    case PointToPoint::bidirectional: return "Bi-Directional Bandwidth Test";
    case PointToPoint::multi_latency: return "Multi Latency Test";
  }
  return "";
}

// This rank's figure for one size: latency in us, or bandwidth in MB/s (10^6 bytes, as OSU).
double measure(Pair& pair, PointToPoint kind, const Options& opt, std::size_t size, bool* valid) {
  const bool ping_pong = kind == PointToPoint::latency || kind == PointToPoint::multi_latency;
  const int iters = opt.iterations_for(size), warmup = opt.warmup_for(size);
  pair.fill(size, 0);
  double start = 0;
  for (int i = 0; i < warmup + iters; ++i) {
    if (opt.validate) pair.fill(size, i);
    if (i == warmup) start = MPI_Wtime();
    if (ping_pong) pair.ping_pong(size);
    else pair.window(size, kind == PointToPoint::bidirectional);
    if (opt.validate) {  // checking stays inside the timed loop here, as in OSU's -c
      // Ping-pong leaves the initiator's data everywhere; a window leaves the peer's at the receiver.
      const bool receiver = kind != PointToPoint::bandwidth || !pair.initiator();
      int me = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &me);
      const int sender = ping_pong ? (pair.initiator() ? me : pair.peer()) : pair.peer();
      if (receiver && !pair.check(size, i, sender)) *valid = false;
    }
  }
  double elapsed = MPI_Wtime() - start;
  if (iters == 0 || elapsed <= 0) return 0;
  if (ping_pong) return 1e6 * elapsed / (2.0 * iters);
  double moved = static_cast<double>(size) * opt.window * iters * (kind == PointToPoint::bidirectional ? 2 : 1);
  return moved / elapsed / kMega;
}

}  // namespace

int run_point_to_point(int argc, char** argv, PointToPoint kind) {
  MpiSession mpi(&argc, &argv);
  Options opt;
  if (int code = mpi.prepare(argc, argv, &opt); code >= 0) return code;
  if (mpi.size() < 2) {
    if (mpi.rank() == 0) std::fprintf(stderr, "osu: this test needs at least two processes\n");
    return 1;
  }
  const bool multi = kind == PointToPoint::multi_latency;
  print_title(mpi.rank(), title(kind), opt.memory, nullptr);
  print_columns(mpi.rank(), true, {kind == PointToPoint::bandwidth || kind == PointToPoint::bidirectional
                                       ? "Bandwidth (MB/s)" : "Latency (us)"}, opt);
  // Pairs: (0, 1), or for the many-pairs test (i, i + n/2). Other ranks take no part; they only join
  // the per-size agreements on figures and validity.
  const int half = multi ? mpi.size() / 2 : 1;
  const int me = mpi.rank();
  const bool active = me < 2 * half;
  const bool initiator = me < half;
  Pair pair(opt, me, !active ? me : initiator ? me + half : me - half, initiator);
  bool all_valid = true;
  for (std::size_t size = opt.min_size; size <= opt.max_size; size = size ? size * 2 : 1) {
    bool valid = true;
    Row row;
    row.size = size;
    double figure = active ? measure(pair, kind, opt, size, &valid) : 0.0;
    if (multi) {  // the mean over every rank of every pair, as OSU's multi_lat reports it
      double sum = 0;
      MPI_Reduce(&figure, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      figure = sum / (2.0 * half);
    }
    row.figures = {figure};
    row.iterations = opt.iterations_for(size);
    row.valid = all_true(valid, MPI_COMM_WORLD);
    all_valid = all_valid && row.valid;
    print_row(mpi.rank(), row, opt);
  }
  return all_valid ? 0 : 1;
}

}  // namespace osu
