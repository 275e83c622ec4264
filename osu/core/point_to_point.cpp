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

// Rank 0 and 1's buffers and the exchanges between them. Messages are bytes (MPI_CHAR).
class Pair {
 public:
  Pair(const Options& opt, int rank)
      : opt_(opt), rank_(rank), peer_(1 - rank), send_(opt.memory, opt.max_size), recv_(opt.memory, opt.max_size),
        corrupt_(corrupt_results_requested()), requests_(2 * static_cast<std::size_t>(opt.window)) {}

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

  // One ping-pong; rank 1 echoes rank 0's message, so both check data from rank 0.
  void ping_pong(std::size_t size) {
    int n = static_cast<int>(size);
    if (rank_ == 0) {
      MPI_Send(send_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD);
      MPI_Recv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD);
    }
  }

  // One window of messages: from rank 0 to 1 (both = false) or both ways, closed by a short reply.
  void window(std::size_t size, bool both) {
    int n = static_cast<int>(size);
    std::size_t posted = 0;
    for (int w = 0; w < opt_.window; ++w) {
      if (rank_ == 1 || both)
        MPI_Irecv(recv_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, &requests_[posted++]);
      if (rank_ == 0 || both)
        MPI_Isend(send_.data(), n, MPI_CHAR, peer_, kTag, MPI_COMM_WORLD, &requests_[posted++]);
    }
    MPI_Waitall(static_cast<int>(posted), requests_.data(), MPI_STATUSES_IGNORE);
    char ack = 0;
    if (rank_ == 0) MPI_Recv(&ack, 1, MPI_CHAR, peer_, kTag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else MPI_Send(&ack, 1, MPI_CHAR, peer_, kTag + 1, MPI_COMM_WORLD);
  }

 private:
  static const Element& element() { return *find_element("char"); }

  const Options& opt_;
  int rank_, peer_;
  Buffer send_, recv_;
  bool corrupt_;
  std::vector<MPI_Request> requests_;
};

const char* title(PointToPoint kind) {
  switch (kind) {
    case PointToPoint::latency: return "Latency Test";
    case PointToPoint::bandwidth: return "Bandwidth Test";
    case PointToPoint::bidirectional: return "Bi-Directional Bandwidth Test";
  }
  return "";
}

// Rank 0's figure for one size: latency in us, or bandwidth in MB/s (10^6 bytes, as OSU).
double measure(Pair& pair, PointToPoint kind, const Options& opt, std::size_t size, int rank, bool* valid) {
  const int iters = opt.iterations_for(size), warmup = opt.warmup_for(size);
  pair.fill(size, 0);
  double start = 0;
  for (int i = 0; i < warmup + iters; ++i) {
    if (opt.validate) pair.fill(size, i);
    if (i == warmup) start = MPI_Wtime();
    if (kind == PointToPoint::latency) pair.ping_pong(size);
    else pair.window(size, kind == PointToPoint::bidirectional);
    if (opt.validate) {  // checking stays inside the timed loop here, as in OSU's -c
      // Ping-pong leaves rank 0's data everywhere; a window leaves the peer's data at the receiver.
      bool receiver = kind != PointToPoint::bandwidth || rank == 1;
      int sender = kind == PointToPoint::latency ? 0 : 1 - rank;
      if (receiver && !pair.check(size, i, sender)) *valid = false;
    }
  }
  double elapsed = MPI_Wtime() - start;
  if (iters == 0 || elapsed <= 0) return 0;
  if (kind == PointToPoint::latency) return 1e6 * elapsed / (2.0 * iters);
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
  print_title(mpi.rank(), title(kind), opt.memory, nullptr);
  print_columns(mpi.rank(), true, {kind == PointToPoint::latency ? "Latency (us)" : "Bandwidth (MB/s)"}, opt);
  const bool active = mpi.rank() < 2;
  // Ranks beyond the pair take no part; they only join the per-size agreement on validity.
  Pair pair(opt, mpi.rank() < 2 ? mpi.rank() : 0);
  bool all_valid = true;
  for (std::size_t size = opt.min_size; size <= opt.max_size; size = size ? size * 2 : 1) {
    bool valid = true;
    Row row;
    row.size = size;
    row.figures = {active ? measure(pair, kind, opt, size, mpi.rank(), &valid) : 0.0};
    row.iterations = opt.iterations_for(size);
    row.valid = all_true(valid, MPI_COMM_WORLD);
    all_valid = all_valid && row.valid;
    print_row(mpi.rank(), row, opt);
  }
  return all_valid ? 0 : 1;
}

}  // namespace osu
