#include "osu/core/point_to_point.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
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

// MPI on one communicator. With -A the data moves on a duplicate of WORLD that asserts device-only
// point-to-point (the MPI 4.1 info key libmcrpmpi reads), and the acknowledgement is a byte of the
// same memory kind, since such a communicator refuses host buffers.
class MpiTransport : public Transport {
 public:
  explicit MpiTransport(const Options& opt)
      : ack_(opt.memory, 1), requests_(2 * static_cast<std::size_t>(opt.window)) {
    if (!opt.assert_device_only) return;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:device");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm_);
    MPI_Info_free(&info);
  }
  ~MpiTransport() override {
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }

  void send(const void* data, std::size_t bytes, int peer) override {
    MPI_Send(data, static_cast<int>(bytes), MPI_CHAR, peer, kTag, comm_);
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    MPI_Recv(data, static_cast<int>(bytes), MPI_CHAR, peer, kTag, comm_, MPI_STATUS_IGNORE);
  }
  void window(const void* out, void* in, std::size_t bytes, int sends, int recvs, int peer) override {
    const int n = static_cast<int>(bytes);
    std::size_t posted = 0;
    for (int w = 0; w < std::max(sends, recvs); ++w) {
      if (w < recvs) MPI_Irecv(in, n, MPI_CHAR, peer, kTag, comm_, &requests_[posted++]);
      if (w < sends) MPI_Isend(out, n, MPI_CHAR, peer, kTag, comm_, &requests_[posted++]);
    }
    MPI_Waitall(static_cast<int>(posted), requests_.data(), MPI_STATUSES_IGNORE);
  }
  void acknowledge(bool initiator, int peer) override {
    if (initiator) MPI_Recv(ack_.data(), 1, MPI_CHAR, peer, kTag + 1, comm_, MPI_STATUS_IGNORE);
    else MPI_Send(ack_.data(), 1, MPI_CHAR, peer, kTag + 1, comm_);
  }

 private:
  MPI_Comm comm_ = MPI_COMM_WORLD;
  Buffer ack_;
  std::vector<MPI_Request> requests_;
};

// One pair's buffers and the exchanges between its two ranks (world ranks `rank` and `peer`; the
// initiator starts ping-pongs and sends windows). Messages are bytes (MPI_CHAR).
class Pair {
 public:
  Pair(const Options& opt, Transport& transport, int rank, int peer, bool initiator)
      : opt_(opt), transport_(transport), rank_(rank), peer_(peer), initiator_(initiator),
        send_(opt.memory, opt.max_size), recv_(opt.memory, opt.max_size), corrupt_(corrupt_results_requested()) {}

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
    if (initiator_) {
      transport_.send(send_.data(), size, peer_);
      transport_.recv(recv_.data(), size, peer_);
    } else {
      transport_.recv(recv_.data(), size, peer_);
      transport_.send(recv_.data(), size, peer_);
    }
  }

  // One window of messages: from the initiator (both = false) or both ways, closed by a short reply.
  void window(std::size_t size, bool both) {
    const int sends = initiator_ || both ? opt_.window : 0;
    const int recvs = !initiator_ || both ? opt_.window : 0;
    transport_.window(send_.data(), recv_.data(), size, sends, recvs, peer_);
    transport_.acknowledge(initiator_, peer_);
  }

  int peer() const { return peer_; }
  bool initiator() const { return initiator_; }

 private:
  static const Element& element() { return *find_element("char"); }

  const Options& opt_;
  Transport& transport_;
  int rank_, peer_;
  bool initiator_;
  Buffer send_, recv_;
  bool corrupt_;
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

std::unique_ptr<Transport> mpi_transport(const Options& options) { return std::make_unique<MpiTransport>(options); }

int run_point_to_point(int argc, char** argv, PointToPoint kind, TransportFactory make, const char* prefix,
                       bool device_only) {
  MpiSession mpi(&argc, &argv);
  Options opt;
  if (int code = mpi.prepare(argc, argv, &opt, device_only); code >= 0) return code;
  if (mpi.size() < 2) {
    if (mpi.rank() == 0) std::fprintf(stderr, "osu: this test needs at least two processes\n");
    return 1;
  }
  const bool multi = kind == PointToPoint::multi_latency;
  const std::string heading = prefix != nullptr ? std::string(prefix) + " " + title(kind) : title(kind);
  print_title(mpi.rank(), heading, opt.memory, nullptr);
  print_columns(mpi.rank(), true, {kind == PointToPoint::bandwidth || kind == PointToPoint::bidirectional
                                       ? "Bandwidth (MB/s)" : "Latency (us)"}, opt);
  // Pairs: (0, 1), or for the many-pairs test (i, i + n/2). Other ranks take no part; they only join
  // the per-size agreements on figures and validity.
  const int half = multi ? mpi.size() / 2 : 1;
  const int me = mpi.rank();
  const bool active = me < 2 * half;
  const bool initiator = me < half;
  std::unique_ptr<Transport> transport = make(opt);
  Pair pair(opt, *transport, me, !active ? me : initiator ? me + half : me - half, initiator);
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
