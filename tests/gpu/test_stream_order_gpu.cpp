// The application's own work on the legacy default stream (CuPy's and PyTorch's default) must not
// wait for the library's NCCL work, which waits for peers: two legal programs that hang if it does.
//   default_stream_copy: rank 0 starts MPI_Iallreduce, makes a cudaMemcpy on the default stream,
//     then sends rank 1 a host message that rank 1 receives before starting its own MPI_Iallreduce.
//     Were the communicator's stream blocking, rank 0's cudaMemcpy would wait for the NCCL kernel,
//     i.e. for rank 1, which waits for rank 0's message.
//   finishing_copies: rank 0 starts MPI_Iallgather A (strided receive type, so A's result is
//     unpacked once it is complete) and then B, waits for A and sends rank 1 a host message; rank 1
//     waits for A, receives, and only then starts B. Were A's unpacking queued on the communicator's
//     stream, behind B's kernel, rank 0's MPI_Wait(A) would wait for rank 1.
//   packing_behind_earlier_work: rank 0 starts MPI_Iallreduce A, then MPI_Ialltoall B with a
//     strided send type (packed through host memory when it starts), then sends rank 1 a host
//     message that rank 1 receives before starting A. Were B's packing copy made and waited for on
//     the communicator's stream, behind A's kernel, rank 0 would wait inside MPI_Ialltoall for rank 1.
//   free_behind_nccl: rank 0 starts MPI_Iallreduce A, makes a device MPI_Sendrecv with itself on
//     MPI_COMM_SELF (staged through pinned blocks, which a pool limit of 0 makes the library
//     allocate and free), pauses 50 ms, starts MPI_Iallreduce B on a duplicate of MPI_COMM_WORLD,
//     then sends rank 1 a host message that rank 1 receives before starting A and B. Were the
//     blocks allocated or freed while A's kernel waits for rank 1, cudaMallocHost or cudaFreeHost
//     could wait for that kernel holding the context's lock (device/quiet_work.h), and the
//     Sendrecv or B's launch, and so the message, behind it. Run with MCRPMPI_PINNED_POOL_LIMIT=0.
// Each is a hang, caught by the test's timeout; the results are checked too. Run with the NCCL path
// forced (MCRPMPI_ALLREDUCE=nccl MCRPMPI_ALLGATHER=nccl MCRPMPI_ALLTOALL=nccl); 2 ranks or more, other ranks join the
// collectives only. Exits 77 without a CUDA device. With --fake-device (and the fake NCCL) it
// checks its own logic and references on CPU, where only free_behind_nccl can hang (the fake NCCL
// makes the fake device's frees and pinned allocations wait for its kernels,
// tests/fake_nccl/device_model.h). (The library's ordering after earlier default-stream work is
// checked by the suites on `device-legacy` memory.)
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/gpu/device_memory.h"
#include "tests/mpi/check.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

constexpr int kCount = 1024;
constexpr int kGoAhead = 7;  // the host message's tag

// Rank 0 tells rank 1 to go on; rank 1 waits for it. Other ranks do nothing.
void hand_over(int rank) {
  int token = 1;
  if (rank == 0) MPI_Send(&token, 1, MPI_INT, 1, kGoAhead, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, kGoAhead, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void default_stream_copy(Checker& checker, MemorySpace& space, int rank, int size) {
  SpaceBuffer<int> send(space, std::vector<int>(kCount, rank + 1));
  SpaceBuffer<int> recv(space, std::vector<int>(kCount, -1));
  SpaceBuffer<int> other(space, std::vector<int>(1, 42));
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank != 1) MPI_Iallreduce(send.data(), recv.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
  if (rank == 0) {
    int copied = 0;
    if (std::string(space.name()) == "device") {
      mcrp_test::require_cuda(cudaMemcpy(&copied, other.data(), sizeof copied, cudaMemcpyDeviceToHost), "cudaMemcpy");
    } else {
      copied = other.download()[0];  // --fake-device: the test's own logic only
    }
    checker.check(copied == 42, "default_stream_copy: the application's own copy");
  }
  hand_over(rank);
  if (rank == 1) MPI_Iallreduce(send.data(), recv.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
  const int rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  const std::vector<int> want(kCount, size * (size + 1) / 2);
  const std::vector<int> got = recv.download();
  checker.expect_equal("default_stream_copy: MPI_Iallreduce", rc, got.data(), want.data(), want.size());
}

// kCount ints, every other one, extent 2 * kCount ints: the library packs it through host memory.
MPI_Datatype every_other_int() {
  MPI_Datatype vector = MPI_DATATYPE_NULL;
  MPI_Type_vector(kCount, 1, 2, MPI_INT, &vector);
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_create_resized(vector, 0, static_cast<MPI_Aint>(2 * kCount * sizeof(int)), &strided);
  MPI_Type_commit(&strided);
  MPI_Type_free(&vector);
  return strided;
}

void finishing_copies(Checker& checker, MemorySpace& space, int rank, int size) {
  // A's receive type is strided, so the library unpacks A's result at completion.
  MPI_Datatype strided = every_other_int();
  const std::size_t strided_ints = static_cast<std::size_t>(2 * kCount * size);
  SpaceBuffer<int> send(space, std::vector<int>(kCount, rank + 1));
  SpaceBuffer<int> recv_a(space, std::vector<int>(strided_ints, -1));
  SpaceBuffer<int> recv_b(space, std::vector<int>(static_cast<std::size_t>(kCount * size), -1));
  MPI_Request a = MPI_REQUEST_NULL;
  MPI_Request b = MPI_REQUEST_NULL;
  MPI_Iallgather(send.data(), kCount, MPI_INT, recv_a.data(), 1, strided, MPI_COMM_WORLD, &a);
  if (rank != 1) MPI_Iallgather(send.data(), kCount, MPI_INT, recv_b.data(), kCount, MPI_INT, MPI_COMM_WORLD, &b);
  const int rc_a = MPI_Wait(&a, MPI_STATUS_IGNORE);
  hand_over(rank);
  if (rank == 1) MPI_Iallgather(send.data(), kCount, MPI_INT, recv_b.data(), kCount, MPI_INT, MPI_COMM_WORLD, &b);
  const int rc_b = MPI_Wait(&b, MPI_STATUS_IGNORE);
  std::vector<int> want_a(strided_ints, -1);
  std::vector<int> want_b;
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < kCount; ++i) want_a[static_cast<std::size_t>(2 * kCount * r + 2 * i)] = r + 1;
    want_b.insert(want_b.end(), kCount, r + 1);
  }
  const std::vector<int> got_a = recv_a.download();
  const std::vector<int> got_b = recv_b.download();
  checker.expect_equal("finishing_copies: MPI_Iallgather A (strided)", rc_a, got_a.data(), want_a.data(), want_a.size());
  checker.expect_equal("finishing_copies: MPI_Iallgather B", rc_b, got_b.data(), want_b.data(), want_b.size());
  MPI_Type_free(&strided);
}

void packing_behind_earlier_work(Checker& checker, MemorySpace& space, int rank, int size) {
  MPI_Datatype strided = every_other_int();
  std::vector<int> send_b(static_cast<std::size_t>(2 * kCount * size), -1);
  for (int d = 0; d < size; ++d) {
    for (int i = 0; i < kCount; ++i) send_b[static_cast<std::size_t>(2 * kCount * d + 2 * i)] = 100 * (rank + 1) + d;
  }
  SpaceBuffer<int> send_a(space, std::vector<int>(kCount, rank + 1));
  SpaceBuffer<int> recv_a(space, std::vector<int>(kCount, -1));
  SpaceBuffer<int> send(space, send_b);
  SpaceBuffer<int> recv(space, std::vector<int>(static_cast<std::size_t>(kCount * size), -1));
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  auto start_both = [&] {
    MPI_Iallreduce(send_a.data(), recv_a.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
    MPI_Ialltoall(send.data(), 1, strided, recv.data(), kCount, MPI_INT, MPI_COMM_WORLD, &requests[1]);
  };
  if (rank != 1) start_both();
  hand_over(rank);
  if (rank == 1) start_both();
  const int rc = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  const std::vector<int> want_a(kCount, size * (size + 1) / 2);
  std::vector<int> want_b;
  for (int s = 0; s < size; ++s) want_b.insert(want_b.end(), kCount, 100 * (s + 1) + rank);
  const std::vector<int> got_a = recv_a.download();
  const std::vector<int> got_b = recv.download();
  checker.expect_equal("packing_behind_earlier_work: MPI_Iallreduce A", rc, got_a.data(), want_a.data(), want_a.size());
  checker.expect_equal("packing_behind_earlier_work: MPI_Ialltoall B (strided)", rc, got_b.data(), want_b.data(),
                       want_b.size());
  MPI_Type_free(&strided);
}

void free_behind_nccl(Checker& checker, MemorySpace& space, MPI_Comm other, int rank, int size) {
  SpaceBuffer<int> send(space, std::vector<int>(kCount, rank + 1));
  SpaceBuffer<int> recv_a(space, std::vector<int>(kCount, -1));
  SpaceBuffer<int> recv_b(space, std::vector<int>(kCount, -1));
  // Allocated before A and freed after the Waitall: the program's own cudaMalloc and cudaFree would
  // wait for A's kernel too, which is the hazard under test, not the program's to avoid.
  SpaceBuffer<int> to_self(space, std::vector<int>(kCount, 5));
  SpaceBuffer<int> from_self(space, std::vector<int>(kCount, -1));
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  auto start_a = [&] {
    MPI_Iallreduce(send.data(), recv_a.data(), kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
  };
  auto start_b = [&] {
    MPI_Iallreduce(send.data(), recv_b.data(), kCount, MPI_INT, MPI_SUM, other, &requests[1]);
  };
  if (rank != 1) start_a();
  int self_rc = MPI_SUCCESS;
  if (rank == 0) {
    self_rc = MPI_Sendrecv(to_self.data(), kCount, MPI_INT, 0, 0, from_self.data(), kCount, MPI_INT, 0, 0,
                           MPI_COMM_SELF, MPI_STATUS_IGNORE);
    usleep(50 * 1000);  // the background thread starts freeing the staging blocks meanwhile
  }
  if (rank != 1) start_b();
  hand_over(rank);
  if (rank == 1) {
    start_a();
    start_b();
  }
  const int rc = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  if (rank == 0) {
    const std::vector<int> want(kCount, 5);
    const std::vector<int> got = from_self.download();
    checker.expect_equal("free_behind_nccl: MPI_Sendrecv with itself", self_rc, got.data(), want.data(), want.size());
  }
  const std::vector<int> want(kCount, size * (size + 1) / 2);
  const std::vector<int> got_a = recv_a.download();
  const std::vector<int> got_b = recv_b.download();
  checker.expect_equal("free_behind_nccl: MPI_Iallreduce A", rc, got_a.data(), want.data(), want.size());
  checker.expect_equal("free_behind_nccl: MPI_Iallreduce B (duplicate)", rc, got_b.data(), want.data(), want.size());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::unique_ptr<MemorySpace> space = mcrp_test::space_from_arguments(argc, argv);
  if (space == nullptr || size < 2) {
    if (space != nullptr && rank == 0) std::printf("SKIPPED: needs 2 ranks or more\n");
    MPI_Finalize();
    return mcrp_test::kSkipExitCode;
  }
  Checker checker;
  MPI_Comm other = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  {
    // The NCCL communicators are set up first, so that the calls below launch at once.
    SpaceBuffer<int> warm(*space, std::vector<int>(1, 1));
    MPI_Allreduce(MPI_IN_PLACE, warm.data(), 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, warm.data(), 1, MPI_INT, MPI_SUM, other);
  }
  default_stream_copy(checker, *space, rank, size);
  finishing_copies(checker, *space, rank, size);
  packing_behind_earlier_work(checker, *space, rank, size);
  free_behind_nccl(checker, *space, other, rank, size);
  MPI_Comm_free(&other);
  const int rc = checker.finish(MPI_COMM_WORLD, "test_stream_order_gpu");
  MPI_Finalize();
  return rc;
}
