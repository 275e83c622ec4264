// Horovod's call pattern (issues 3 and 6), with `--device` for the GPU run and `--fake-device` for
// the library's fake device on CPU (MCRPMPI_FAKE_DEVICE=1). After
// MPI_Init_thread(MPI_THREAD_MULTIPLE), one background thread owns a dup of COMM_WORLD and loops:
// host control-plane collectives (Allreduce of a small int vector, Gather, Gatherv, Bcast, Barrier,
// Allgather) interleaved on the same communicator with the data collectives (Allreduce in place,
// Allgatherv, Alltoallv, vector Reduce_scatter, Bcast, and fp16 as a contiguous 2-byte type reduced
// by an MPI_Op_create user op). Meanwhile the main thread ping-pongs on another dup, then joins.
// With --device (--fake-device) the data buffers are in CUDA (fake device) memory, the control plane
// stays on the host, as in Horovod: the library must route each call by its own buffers and stage
// the fp16 user op. Every result is compared with a reference computed here. Exits 77 for --device
// without a GPU, and for --fake-device without the library's fake device.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collectives/half_float.h"
#include "tests/mpi/check.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

// The fp16 user op: element-wise sum through float, as Horovod's host fp16 op does.
void half_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = mcrp::float_to_half(mcrp::half_to_float(a[i]) + mcrp::half_to_float(b[i]));
  }
}

// Small multiples of 0.5 (exact in fp16 and float, and so are their sums): results do not depend on
// the reduction order.
float element(int rank, int i, int step) { return static_cast<float>(((rank + 1) * (i + step)) % 16) * 0.5f; }
std::vector<float> elements(int rank, int count, int step, int offset = 0) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = element(rank, offset + i, step);
  return v;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t k = 1; k < d.size(); ++k) d[k] = d[k - 1] + counts[k - 1];
  return d;
}
int total(const std::vector<int>& counts) {
  int t = 0;
  for (int c : counts) t += c;
  return t;
}

class BackgroundLoop {
 public:
  BackgroundLoop(Checker& checker, MPI_Comm comm, MemorySpace& space, MPI_Datatype half, MPI_Op half_op)
      : checker_(checker), comm_(comm), space_(space), half_(half), half_op_(half_op) {
    MPI_Comm_rank(comm, &me_);
    MPI_Comm_size(comm, &size_);
  }

  void run(int steps) {
    for (int s = 0; s < steps; ++s) {
      step_ = s;
      // Sizes cover 0 (every fifth step) up to a few thousand elements.
      n_ = s % 5 == 0 ? 0 : (s * 389) % 4000 + 1;
      what_ = " step " + std::to_string(s) + " n=" + std::to_string(n_) + " [" + space_.name() + "]";
      negotiate();
      allreduce_in_place();
      allgatherv();
      control_allgather();
      alltoallv();
      reduce_scatter();
      if (s % 5 == 4) checker_.check(MPI_Barrier(comm_) == MPI_SUCCESS, "Barrier" + what_);
      bcast();
      fp16_allreduce(s % 2 == 0);
    }
  }

 private:
  template <class T>
  void expect(const std::string& name, int rc, const std::vector<T>& got, const std::vector<T>& want) {
    if (got.size() != want.size()) {
      checker_.check(false, name + what_ + ": size " + std::to_string(got.size()) + " != " + std::to_string(want.size()));
      return;
    }
    checker_.expect_equal(name + what_, rc, got.data(), want.data(), want.size());
  }

  // Control plane, host buffers: the "which tensors are ready" negotiation of one step.
  void negotiate() {
    const int ready = (me_ + step_) % 3;
    int flags[4] = {ready, 1, me_, step_}, summed[4] = {0, 0, 0, 0};
    int rc = MPI_Allreduce(flags, summed, 4, MPI_INT, MPI_SUM, comm_);
    std::vector<int> want_sum = {0, size_, size_ * (size_ - 1) / 2, size_ * step_};
    for (int q = 0; q < size_; ++q) want_sum[0] += (q + step_) % 3;
    expect("control Allreduce int[4]", rc, std::vector<int>(summed, summed + 4), want_sum);

    // Gather name lengths to rank 0, then Gatherv the names (chars).
    const int length = (me_ + step_) % 4 + 1;
    std::vector<int> lengths(size_, -1);
    rc = MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_);
    std::vector<int> want_lengths(size_);
    for (int q = 0; q < size_; ++q) want_lengths[q] = (q + step_) % 4 + 1;
    if (me_ == 0) expect("control Gather", rc, lengths, want_lengths);
    else checker_.check(rc == MPI_SUCCESS, "control Gather" + what_);
    const std::string name = name_of(me_, length);
    std::vector<char> names(total(want_lengths), '?');
    const std::vector<int> offsets = displacements(want_lengths);
    rc = MPI_Gatherv(name.data(), length, MPI_CHAR, names.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm_);
    std::string all_names;
    for (int q = 0; q < size_; ++q) all_names += name_of(q, want_lengths[q]);
    if (me_ == 0) expect("control Gatherv", rc, names, std::vector<char>(all_names.begin(), all_names.end()));
    else checker_.check(rc == MPI_SUCCESS, "control Gatherv" + what_);

    // Rank 0 broadcasts the response list: its length, then the names.
    int response_length = me_ == 0 ? static_cast<int>(all_names.size()) : -1;
    rc = MPI_Bcast(&response_length, 1, MPI_INT, 0, comm_);
    checker_.check(rc == MPI_SUCCESS && response_length == static_cast<int>(all_names.size()),
                   "control Bcast length" + what_);
    std::vector<char> response(all_names.size(), '?');
    if (me_ == 0) response = names;
    rc = MPI_Bcast(response.data(), static_cast<int>(response.size()), MPI_CHAR, 0, comm_);
    expect("control Bcast names", rc, response, std::vector<char>(all_names.begin(), all_names.end()));
  }
  static std::string name_of(int rank, int length) { return std::string(length, static_cast<char>('a' + rank % 26)); }

  void control_allgather() {
    const int mine = me_ * 100 + step_;
    std::vector<int> all(size_, -1), want(size_);
    for (int q = 0; q < size_; ++q) want[q] = q * 100 + step_;
    expect("control Allgather", MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm_), all, want);
  }

  // Data plane: buffers in space_.
  void allreduce_in_place() {
    SpaceBuffer<float> buffer(space_, elements(me_, n_, step_));
    const int rc = MPI_Allreduce(MPI_IN_PLACE, buffer.data(), n_, MPI_FLOAT, MPI_SUM, comm_);
    std::vector<float> want(n_, 0.0f);
    for (int q = 0; q < size_; ++q) {
      for (int i = 0; i < n_; ++i) want[i] += element(q, i, step_);
    }
    expect("data Allreduce in place float", rc, buffer.download(), want);
  }

  void allgatherv() {
    std::vector<int> counts(size_);
    for (int k = 0; k < size_; ++k) counts[k] = (n_ + k * step_) % 50;  // some ranks give 0
    const std::vector<int> displs = displacements(counts);
    SpaceBuffer<float> send(space_, elements(me_, counts[me_], step_));
    SpaceBuffer<float> recv(space_, std::vector<float>(total(counts), -1.0f));
    const int rc = MPI_Allgatherv(send.data(), counts[me_], MPI_FLOAT, recv.data(), counts.data(), displs.data(),
                                  MPI_FLOAT, comm_);
    std::vector<float> want;
    for (int k = 0; k < size_; ++k) {
      const std::vector<float> theirs = elements(k, counts[k], step_);
      want.insert(want.end(), theirs.begin(), theirs.end());
    }
    expect("data Allgatherv", rc, recv.download(), want);
  }

  // Rank a sends block(a, b) of (a + b + step) % 4 * scale elements to rank b.
  int block(int from, int to) const { return (from + to + step_) % 4 * (n_ % 7 + 1); }
  void alltoallv() {
    std::vector<int> sendcounts(size_), recvcounts(size_);
    for (int k = 0; k < size_; ++k) {
      sendcounts[k] = block(me_, k);
      recvcounts[k] = block(k, me_);
    }
    const std::vector<int> sdispls = displacements(sendcounts), rdispls = displacements(recvcounts);
    std::vector<float> send_values;
    for (int k = 0; k < size_; ++k) {
      const std::vector<float> to_k = elements(me_, sendcounts[k], step_, 10 * k);
      send_values.insert(send_values.end(), to_k.begin(), to_k.end());
    }
    SpaceBuffer<float> send(space_, send_values);
    SpaceBuffer<float> recv(space_, std::vector<float>(total(recvcounts), -1.0f));
    const int rc = MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), MPI_FLOAT, recv.data(),
                                 recvcounts.data(), rdispls.data(), MPI_FLOAT, comm_);
    std::vector<float> want;
    for (int k = 0; k < size_; ++k) {
      const std::vector<float> from_k = elements(k, recvcounts[k], step_, 10 * me_);
      want.insert(want.end(), from_k.begin(), from_k.end());
    }
    expect("data Alltoallv", rc, recv.download(), want);
  }

  void reduce_scatter() {
    std::vector<int> counts(size_);
    for (int k = 0; k < size_; ++k) counts[k] = (n_ + 3 * k) % 11;
    const std::vector<int> displs = displacements(counts);
    SpaceBuffer<float> send(space_, elements(me_, total(counts), step_));
    SpaceBuffer<float> recv(space_, std::vector<float>(counts[me_], -1.0f));
    const int rc = MPI_Reduce_scatter(send.data(), recv.data(), counts.data(), MPI_FLOAT, MPI_SUM, comm_);
    std::vector<float> want(counts[me_], 0.0f);
    for (int q = 0; q < size_; ++q) {
      const std::vector<float> theirs = elements(q, counts[me_], step_, displs[me_]);
      for (int i = 0; i < counts[me_]; ++i) want[i] += theirs[i];
    }
    expect("data Reduce_scatter", rc, recv.download(), want);
  }

  void bcast() {
    const int root = step_ % size_;
    SpaceBuffer<float> buffer(space_, me_ == root ? elements(root, n_, step_) : std::vector<float>(n_, -1.0f));
    const int rc = MPI_Bcast(buffer.data(), n_, MPI_FLOAT, root, comm_);
    expect("data Bcast", rc, buffer.download(), elements(root, n_, step_));
  }

  void fp16_allreduce(bool in_place) {
    std::vector<std::uint16_t> mine(n_), want(n_);
    for (int i = 0; i < n_; ++i) {
      mine[i] = mcrp::float_to_half(element(me_, i, step_));
      float sum = 0.0f;
      for (int q = 0; q < size_; ++q) sum += element(q, i, step_);
      want[i] = mcrp::float_to_half(sum);
    }
    SpaceBuffer<std::uint16_t> send(space_, mine);
    SpaceBuffer<std::uint16_t> recv(space_, in_place ? mine : std::vector<std::uint16_t>(n_, 0xffffu));
    const int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), recv.data(), n_, half_, half_op_, comm_);
    expect(std::string("data fp16 Allreduce user op") + (in_place ? " in place" : ""), rc, recv.download(), want);
  }

  Checker& checker_;
  MPI_Comm comm_;
  MemorySpace& space_;
  MPI_Datatype half_;
  MPI_Op half_op_;
  int me_ = 0, size_ = 1, step_ = 0, n_ = 0;
  std::string what_;
};

// The main thread's own traffic on another communicator while the loop runs: ping-pong with the
// neighbour (rank ^ 1), or with itself when it has none. Checked after the join (Checker is not
// thread-safe), so it only counts here.
struct PingPong {
  int errors = 0;
  int mismatches = 0;
  void run(MPI_Comm comm, int rounds) {
    int me = 0, size = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    const int partner = (me ^ 1) < size ? (me ^ 1) : me;
    for (int r = 0; r < rounds; ++r) {
      const int count = r % 50;
      std::vector<int> out(count), in(count, -1), want(count);
      for (int i = 0; i < count; ++i) {
        out[i] = me * 10000 + r * 100 + i;
        want[i] = partner * 10000 + r * 100 + i;
      }
      int rc;
      if (partner == me) {
        rc = MPI_Sendrecv(out.data(), count, MPI_INT, me, r, in.data(), count, MPI_INT, me, r, comm, MPI_STATUS_IGNORE);
      } else if (me < partner) {
        rc = MPI_Send(out.data(), count, MPI_INT, partner, r, comm);
        if (rc == MPI_SUCCESS) rc = MPI_Recv(in.data(), count, MPI_INT, partner, r, comm, MPI_STATUS_IGNORE);
      } else {
        rc = MPI_Recv(in.data(), count, MPI_INT, partner, r, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = MPI_Send(out.data(), count, MPI_INT, partner, r, comm);
      }
      errors += rc == MPI_SUCCESS ? 0 : 1;
      mismatches += in == want ? 0 : 1;
    }
  }
};

struct Options {
  std::string space = "host";  // of the data buffers (tests/mpi/memory_spaces.h)
  int steps = 25;
  int ping_pongs = 300;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0) o.space = "device";
    if (std::strcmp(argv[i], "--fake-device") == 0) o.space = "fake-device";
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) o.steps = std::atoi(argv[++i]);
  }
  return o;
}

int run(const Options& options, MemorySpace& space) {
  Checker checker;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  checker.check(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provides MPI_THREAD_MULTIPLE (got " +
                                                     std::to_string(provided) + ")");
  if (provided != MPI_THREAD_MULTIPLE) return checker.finish(MPI_COMM_WORLD, "test_horovod_pattern");

  MPI_Comm comm, side;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &side);
  MPI_Datatype half;
  MPI_Type_contiguous(2, MPI_BYTE, &half);
  MPI_Type_commit(&half);
  MPI_Op half_op;
  MPI_Op_create(half_sum, 1, &half_op);

  std::thread background([&] { BackgroundLoop(checker, comm, space, half, half_op).run(options.steps); });
  PingPong ping;
  ping.run(side, options.ping_pongs);
  background.join();
  checker.check(ping.errors == 0, "main-thread ping-pong: " + std::to_string(ping.errors) + " calls failed");
  checker.check(ping.mismatches == 0, "main-thread ping-pong: " + std::to_string(ping.mismatches) + " payloads wrong");

  MPI_Op_free(&half_op);
  MPI_Type_free(&half);
  MPI_Comm_free(&side);
  MPI_Comm_free(&comm);
  return checker.finish(MPI_COMM_WORLD, ("test_horovod_pattern on " + options.space).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rc = mcrp_test::kSkipExitCode;
  if (const std::unique_ptr<MemorySpace> space = mcrp_test::make_memory_space(options.space, MPI_COMM_WORLD)) {
    rc = run(options, *space);
  }
  MPI_Finalize();
  return rc;
}
