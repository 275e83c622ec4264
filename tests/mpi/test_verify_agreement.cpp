// MCRPMPI_VERIFY=1 (issue 16 rule 2, issue 13 item 2): when ranks disagree on one collective, every
// rank gets the same MPI error, or the same fallback, within bounded time (ctest TIMEOUT), instead of
// some ranks waiting in a collective the others abandoned or ran differently. The last rank is the
// odd one out:
//   - a library check fails there only (a negative count): every rank fails with MPI_ERR_COUNT;
//   - it passes another datatype (same size), count, op or root, or a gather block of another size:
//     every rank fails with MPI_ERR_TYPE, MPI_ERR_COUNT, MPI_ERR_OP or MPI_ERR_ROOT;
//   - (fake device) it passes host buffers where the others pass device buffers: every rank takes
//     the base MPI and gets the right sum;
//   - its receive buffer is at an unmapped address (as another process's device pointer would be):
//     every rank fails with MPI_ERR_BUFFER;
//   - (device spaces) its device buffer is smaller than the call says (one int short on the fake
//     device, which knows its allocations' exact sizes; a quarter of the size on a GPU, whose
//     driver may round an allocation up): every rank fails with MPI_ERR_BUFFER, and nothing is
//     written past the buffer (the ASan run of this program sees the fake device's heap blocks).
// Each through every call form (blocking, nonblocking, persistent; int and _c). The communicator
// stays usable afterwards. Without VERIFY these programs are erroneous and may hang (docs/routing.md,
// "Ranks that disagree").
// Point-to-point: a receive into and a send from an unmapped buffer (on MPI_COMM_WORLD), and
// (device spaces) from a too-small device buffer (on MPI_COMM_WORLD, staged, and on a duplicate
// asserted device-only, the protocol of p2p/engine.h), fail with MPI_ERR_BUFFER before anything is
// matched or sent; the right call afterwards moves the message. So do partitioned requests on such
// buffers, at MPI_Psend_init/MPI_Precv_init.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/entry_points.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr MPI_Count kCount = 4;

struct Disagreement {
  const char* what;
  Coll coll;
  int error_class;           // on every rank (MPI_SUCCESS: the fallback gives the right result)
  void (*odd)(CollArgs& a);  // what the last rank does differently
};

const Disagreement kDisagreements[] = {
    {"count -1 (a library check)", Coll::Allreduce, MPI_ERR_COUNT, [](CollArgs& a) { a.count = -1; }},
    {"sendcount -1 (a library check)", Coll::Gather, MPI_ERR_COUNT, [](CollArgs& a) { a.sendcount = -1; }},
    {"datatype MPI_FLOAT for MPI_INT", Coll::Allreduce, MPI_ERR_TYPE, [](CollArgs& a) { a.datatype = MPI_FLOAT; }},
    {"count 3 for 4", Coll::Allreduce, MPI_ERR_COUNT, [](CollArgs& a) { a.count = kCount - 1; }},
    {"count 3 for 4", Coll::Bcast, MPI_ERR_COUNT, [](CollArgs& a) { a.count = kCount - 1; }},
    {"op MPI_MAX for MPI_SUM", Coll::Allreduce, MPI_ERR_OP, [](CollArgs& a) { a.op = MPI_MAX; }},
    {"op MPI_MAX for MPI_SUM", Coll::Reduce_scatter_block, MPI_ERR_OP, [](CollArgs& a) { a.op = MPI_MAX; }},
    {"root 1 for 0", Coll::Bcast, MPI_ERR_ROOT, [](CollArgs& a) { a.root = 1; }},
    {"root 1 for 0", Coll::Reduce, MPI_ERR_ROOT, [](CollArgs& a) { a.root = 1; }},
    {"sendcount 3 for 4 (gather block)", Coll::Gather, MPI_ERR_COUNT, [](CollArgs& a) { a.sendcount = kCount - 1; }},
};

// A device buffer shorter than the call says: which collective, and which of its buffers.
struct ShortBuffer {
  Coll coll;
  bool receive;  // the receive buffer is short, else the send buffer (bcast: its one buffer)
  int blocks;    // how many blocks of the count that buffer must hold: 1, or the communicator size (0)
};
const ShortBuffer kShortBuffers[] = {
    {Coll::Allreduce, true, 1}, {Coll::Allreduce, false, 1}, {Coll::Bcast, false, 1},
    {Coll::Allgather, true, 0}, {Coll::Alltoall, false, 0},
};

// Exactly `bytes` in a memory space (SpaceBuffer keeps one element of slack), released on destruction.
class ExactBlock {
 public:
  ExactBlock(MemorySpace& space, std::size_t bytes) : space_(space), data_(space.allocate(bytes)) {}
  ~ExactBlock() { space_.release(data_); }
  ExactBlock(const ExactBlock&) = delete;
  ExactBlock& operator=(const ExactBlock&) = delete;
  void* data() const { return data_; }

 private:
  MemorySpace& space_;
  void* data_;
};

int error_class_of(int rc) {
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  return error_class;
}

// An address no memory of a process is ever mapped at (below Linux's mmap_min_addr), standing for a
// device pointer of another process, which this process does not know either.
void* const kUnmapped = reinterpret_cast<void*>(std::uintptr_t{0x1000});

std::string form_label(CallForm form, CountForm counts) {
  return std::string(call_form_name(form)) + " " + form_name(counts);
}

class Run {
 public:
  Run(Checker& checker, MemorySpace& space, const std::string& space_name)
      : checker_(checker), space_(space), fake_device_(space_name == "fake-device") {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // A GPU's allocations may be larger than asked for: there the call covers 4 MiB a block, so a
    // buffer of a quarter of that is short whatever the driver's rounding.
    short_count_ = fake_device_ ? kCount : MPI_Count{1} << 20;
  }

  // A correct call's arguments on `send`/`recv`: kCount ints per block, MPI_SUM, root 0.
  CollArgs correct(Coll coll, void* send, void* recv) const {
    CollArgs a;
    a.sendbuf = send;
    a.recvbuf = recv;
    a.count = a.sendcount = a.recvcount = kCount;
    a.datatype = a.sendtype = a.recvtype = MPI_INT;
    a.op = MPI_SUM;
    a.root = 0;
    a.comm = MPI_COMM_WORLD;
    if (coll == Coll::Bcast) a.recvbuf = send;
    return a;
  }

  void disagreement(const Disagreement& d, CallForm form, CountForm counts) {
    if (d.error_class == MPI_ERR_ROOT && size_ < 2) return;  // one rank cannot disagree on the root
    SpaceBuffer<int> send(space_, std::vector<int>(kCount * size_, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(kCount * size_, 0));
    CollArgs a = correct(d.coll, send.data(), recv.data());
    if (rank_ == size_ - 1) d.odd(a);
    const int error_class = error_class_of(invoke(d.coll, form, counts, a, size_));
    checker_.check(error_class == d.error_class,
                   std::string(coll_name(d.coll)) + " " + form_label(form, counts) + ", last rank's " + d.what +
                       " (rank " + std::to_string(rank_) + "): expected class " + std::to_string(d.error_class) +
                       " on every rank, got " + std::to_string(error_class));
  }

  // The last rank's buffers are host memory, the others' in the space: every rank takes the base
  // MPI, and the sum is right everywhere.
  void memory_kinds(CallForm form, CountForm counts, MemorySpace& host) {
    MemorySpace& mine = rank_ == size_ - 1 ? host : space_;
    SpaceBuffer<int> send(mine, std::vector<int>(kCount, rank_ + 1));
    SpaceBuffer<int> recv(mine, std::vector<int>(kCount, 0));
    const CollArgs a = correct(Coll::Allreduce, send.data(), recv.data());
    const int rc = invoke(Coll::Allreduce, form, counts, a, size_);
    const std::vector<int> expected(kCount, size_ * (size_ + 1) / 2);
    checker_.expect_equal("allreduce " + form_label(form, counts) + ", last rank on host memory", rc,
                          recv.download().data(), expected.data(), kCount);
  }

  // The bytes of a short buffer that must hold `needed`: one int short on the fake device, a
  // quarter on a GPU.
  std::size_t short_bytes(std::size_t needed) const { return fake_device_ ? needed - sizeof(int) : needed / 4; }

  // The last rank's buffer is short (device spaces): every rank fails with MPI_ERR_BUFFER.
  void short_buffer(const ShortBuffer& b, CallForm form, CountForm counts) {
    const std::size_t elements = static_cast<std::size_t>(short_count_ * size_);
    SpaceBuffer<int> send(space_, std::vector<int>(elements, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(elements, 0));
    const std::size_t needed = static_cast<std::size_t>(short_count_ * (b.blocks == 0 ? size_ : 1)) * sizeof(int);
    ExactBlock short_block(space_, short_bytes(needed));
    CollArgs a = correct(b.coll, send.data(), recv.data());
    a.count = a.sendcount = a.recvcount = short_count_;
    if (rank_ == size_ - 1) {
      if (b.receive || b.coll == Coll::Bcast) a.recvbuf = short_block.data();  // bcast's one buffer is both
      if (!b.receive) a.sendbuf = short_block.data();
    }
    const int error_class = error_class_of(invoke(b.coll, form, counts, a, size_));
    checker_.check(error_class == MPI_ERR_BUFFER,
                   std::string(coll_name(b.coll)) + " " + form_label(form, counts) + ", last rank's " +
                       (b.receive ? "receive" : "send") + " buffer short (rank " + std::to_string(rank_) +
                       "): expected MPI_ERR_BUFFER on every rank, got class " + std::to_string(error_class));
  }

  // Point-to-point with this rank itself on `comm` (device spaces): a too-small receive or send
  // buffer is refused before anything is matched or sent; the right call then moves the message.
  void p2p_short_buffers(MPI_Comm comm, const std::string& label) {
    ExactBlock short_block(space_, short_bytes(static_cast<std::size_t>(short_count_) * sizeof(int)));
    p2p_refused_buffer(comm, label, short_block.data(), "a short device buffer");
  }

  void partitioned_short_buffer() {
    ExactBlock short_block(space_, short_bytes(static_cast<std::size_t>(short_count_) * sizeof(int)));
    partitioned_refused_buffer(short_block.data(), "a short device buffer");
  }

  // A receive into and a send from `bad` on `comm` (with this rank itself) fail with MPI_ERR_BUFFER
  // before anything is matched or sent; the right call then moves the message.
  void p2p_refused_buffer(MPI_Comm comm, const std::string& label, void* bad, const std::string& what) {
    int self = 0;
    MPI_Comm_rank(comm, &self);
    const MPI_Count n = short_count_;
    const std::vector<int> values(static_cast<std::size_t>(n), rank_ + 7);
    SpaceBuffer<int> good_send(space_, values);
    SpaceBuffer<int> good_recv(space_, std::vector<int>(values.size(), 0));

    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(good_send.data(), n, MPI_INT, self, 5, comm, &request);
    int error_class = error_class_of(MPI_Recv(bad, n, MPI_INT, self, 5, comm, MPI_STATUS_IGNORE));
    checker_.check(error_class == MPI_ERR_BUFFER, label + ": MPI_Recv into " + what + ": expected MPI_ERR_BUFFER, "
                                                  "got class " + std::to_string(error_class));
    int rc = MPI_Recv(good_recv.data(), n, MPI_INT, self, 5, comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    checker_.expect_equal(label + ": the message, received after the refused receive", rc,
                          good_recv.download().data(), values.data(), values.size());

    good_recv.upload(std::vector<int>(values.size(), 0));
    MPI_Irecv(good_recv.data(), n, MPI_INT, self, 6, comm, &request);
    error_class = error_class_of(MPI_Send(bad, n, MPI_INT, self, 6, comm));
    checker_.check(error_class == MPI_ERR_BUFFER, label + ": MPI_Send from " + what + ": expected MPI_ERR_BUFFER, "
                                                  "got class " + std::to_string(error_class));
    rc = MPI_Send(good_send.data(), n, MPI_INT, self, 6, comm);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    checker_.expect_equal(label + ": the receive posted before the refused send gets the next one", rc,
                          good_recv.download().data(), values.data(), values.size());
  }

  // Partitioned requests (MPI 4.0) with this rank itself: MPI_Psend_init and MPI_Precv_init on
  // `bad` (two partitions of short_count_ / 2 ints) fail with MPI_ERR_BUFFER at init and leave no
  // request, where without MCRPMPI_VERIFY the first MPI_Pready or the message's arrival would read
  // or write past the memory; a good pair then moves the message.
  void partitioned_refused_buffer(void* bad, const std::string& what) {
    int self = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &self);
    const int partitions = 2;
    const MPI_Count per_partition = short_count_ / partitions;
    for (bool receive : {false, true}) {
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = receive ? MPI_Precv_init(bad, partitions, per_partition, MPI_INT, self, 7, MPI_COMM_WORLD,
                                              MPI_INFO_NULL, &request)
                             : MPI_Psend_init(bad, partitions, per_partition, MPI_INT, self, 7, MPI_COMM_WORLD,
                                              MPI_INFO_NULL, &request);
      const std::string call = receive ? "MPI_Precv_init into " : "MPI_Psend_init from ";
      checker_.check(
          error_class_of(rc) == MPI_ERR_BUFFER && request == MPI_REQUEST_NULL,
          call + what + ": expected MPI_ERR_BUFFER and no request, got class " + std::to_string(error_class_of(rc)));
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
    const std::vector<int> values(static_cast<std::size_t>(short_count_), rank_ + 11);
    SpaceBuffer<int> good_send(space_, values);
    SpaceBuffer<int> good_recv(space_, std::vector<int>(values.size(), 0));
    MPI_Request pair[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = MPI_Precv_init(good_recv.data(), partitions, per_partition, MPI_INT, self, 7, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &pair[0]);
    if (rc == MPI_SUCCESS) {
      rc = MPI_Psend_init(good_send.data(), partitions, per_partition, MPI_INT, self, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &pair[1]);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Startall(2, pair);
    if (rc == MPI_SUCCESS) rc = MPI_Pready_range(0, partitions - 1, pair[1]);
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
    checker_.expect_equal("the partitioned message after the refused inits (" + what + ")", rc,
                          good_recv.download().data(), values.data(), values.size());
    for (MPI_Request& r : pair) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
  }

  // The last rank's receive buffer is at an address where nothing of this process is mapped (as
  // another process's device pointer would be): every rank fails with MPI_ERR_BUFFER.
  void unmapped_buffer(CallForm form, CountForm counts) {
    SpaceBuffer<int> send(space_, std::vector<int>(kCount, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(kCount, 0));
    CollArgs a = correct(Coll::Allreduce, send.data(), recv.data());
    if (rank_ == size_ - 1) a.recvbuf = kUnmapped;
    const int error_class = error_class_of(invoke(Coll::Allreduce, form, counts, a, size_));
    checker_.check(error_class == MPI_ERR_BUFFER,
                   "Allreduce " + form_label(form, counts) + ", last rank's receive buffer unmapped (rank " +
                       std::to_string(rank_) + "): expected MPI_ERR_BUFFER on every rank, got class " +
                       std::to_string(error_class));
  }

  void still_usable() {
    SpaceBuffer<int> send(space_, std::vector<int>(kCount, rank_ + 1));
    SpaceBuffer<int> recv(space_, std::vector<int>(kCount, 0));
    const int rc = MPI_Allreduce(send.data(), recv.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const std::vector<int> expected(kCount, size_ * (size_ + 1) / 2);
    checker_.expect_equal("allreduce after the disagreements", rc, recv.download().data(), expected.data(), kCount);
  }

 private:
  Checker& checker_;
  MemorySpace& space_;
  bool fake_device_;
  MPI_Count short_count_ = kCount;  // elements a block of the short-buffer calls
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::string space_name = option(argc, argv, "--space", "host");
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      Checker checker;
      Run run(checker, *space, space_name);
      HostMemory host;
      const bool device = space_name != "host";
      for (CallForm form : kCallForms)
        for (CountForm counts : kCountForms) {
          for (const Disagreement& d : kDisagreements) run.disagreement(d, form, counts);
          run.unmapped_buffer(form, counts);
          if (!device) continue;
          run.memory_kinds(form, counts, host);
          for (const ShortBuffer& b : kShortBuffers) run.short_buffer(b, form, counts);
        }
      run.p2p_refused_buffer(MPI_COMM_WORLD, "MPI_COMM_WORLD", kUnmapped, "an unmapped buffer");
      run.partitioned_refused_buffer(kUnmapped, "an unmapped buffer");
      if (device) {
        run.partitioned_short_buffer();
        run.p2p_short_buffers(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        MPI_Comm asserted = dup_asserting_device_only(MPI_COMM_WORLD);
        run.p2p_short_buffers(asserted, "a duplicate asserted device-only");
        MPI_Comm_free(&asserted);
      }
      // Nonblocking: the error comes at the call, on every rank, with no request left behind.
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      SpaceBuffer<int> send(*space, std::vector<int>(kCount * size, 1));
      SpaceBuffer<int> recv(*space, std::vector<int>(kCount * size, 0));
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = MPI_Iallgather(send.data(), rank == size - 1 ? -1 : kCount, MPI_INT, recv.data(), kCount, MPI_INT,
                                    MPI_COMM_WORLD, &request);
      checker.check(rc != MPI_SUCCESS && request == MPI_REQUEST_NULL,
                    "iallgather, sendcount -1 on the last rank: an error and no request left, on every rank");
      run.still_usable();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_verify_agreement --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
