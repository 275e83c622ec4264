// A fixed mix of calls for the MCRPMPI_PROFILE and MCRPMPI_STATS tests (tests/mpi/check_profile.py):
// collectives (MPI_Alltoallw and a neighborhood collective among them), local calls (MPI_Pack,
// MPI_Unpack, MPI_Reduce_local), point-to-point and partitioned point-to-point on fake device buffers
// (staged path, or `direct` on a CUDA-aware base; one-rank copy) and on host buffers (base MPI), blocking and
// nonblocking. Rank 0 prints on stdout the
// rows the profile must show, computed from the loop counts here ("expect <operation> <form> <path> <calls summed over
// ranks>"), and the statistics' rows ("expect-stats <collective> <path> <calls> <bytes>"); the checker compares them
// with the reports the library prints at MPI_Finalize. The program makes no other MPI call that the library routes, so
// the report must hold exactly these rows. Every result is checked, so a profile that broke a path fails here too.
// Needs MCRPMPI_FAKE_DEVICE=1 (exit 77 otherwise: the device rows could not appear).
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "device/fake_device.h"
#include "tests/mpi/cuda_aware_base.h"

namespace {

constexpr int kSkip = 77;
constexpr int kCount = 4;  // floats per buffer
constexpr int kDeviceAllreduces = 5;
constexpr int kHostBcasts = 3;
constexpr int kDeviceIallreduces = 2;
constexpr int kSelfAllreduces = 4;  // on MPI_COMM_SELF: the one-rank copy
constexpr int kDeviceMessages = 3;  // rank 0 sends to rank 1
constexpr int kHostMessages = 2;
constexpr int kDeviceAlltoallws = 2;         // one int to every rank, staged
constexpr int kHostNeighborAlltoalls = 3;    // nonblocking, one int to each neighbor of a ring
constexpr int kRingNeighbors = 2;            // a periodic 1-D grid: one each way
constexpr int kDevicePacks = 2;              // MPI_Pack then MPI_Unpack of fake device memory, staged
constexpr int kHostReduceLocals = 3;         // MPI_Reduce_local on host buffers
constexpr int kPartitionedRounds = 2;        // rank 0 sends to rank 1 a float a partition

int g_failures = 0;

void expect_equal(float got, float want, const char* what) {
  if (got == want) return;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "rank %d: %s: got %g, want %g\n", rank, what, static_cast<double>(got), static_cast<double>(want));
  ++g_failures;
}

float* device_floats() { return static_cast<float*>(mcrpmpi_fake_device_alloc(kCount * sizeof(float))); }

void fill(float* data, float value) {
  for (int i = 0; i < kCount; ++i) data[i] = value + static_cast<float>(i);
}

void collectives(int rank, int size) {
  float* send = device_floats();
  float* recv = device_floats();
  const float ranks_sum = static_cast<float>(size * (size - 1) / 2);
  for (int i = 0; i < kDeviceAllreduces; ++i) {
    fill(send, static_cast<float>(rank));
    MPI_Allreduce(send, recv, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    expect_equal(recv[1], ranks_sum + static_cast<float>(size), "device allreduce");
  }
  for (int i = 0; i < kDeviceIallreduces; ++i) {
    fill(send, static_cast<float>(rank));
    MPI_Request request;
    MPI_Iallreduce(send, recv, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect_equal(recv[0], ranks_sum, "device iallreduce");
  }
  for (int i = 0; i < kSelfAllreduces; ++i) {
    fill(send, 7.0f);
    MPI_Allreduce(send, recv, kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_SELF);
    expect_equal(recv[2], 9.0f, "device allreduce on MPI_COMM_SELF");
  }
  std::vector<float> host(kCount);
  for (int i = 0; i < kHostBcasts; ++i) {
    fill(host.data(), rank == 0 ? 3.0f : -1.0f);
    MPI_Bcast(host.data(), kCount, MPI_FLOAT, 0, MPI_COMM_WORLD);
    expect_equal(host[3], 6.0f, "host bcast");
  }
  mcrpmpi_fake_device_free(send);
  mcrpmpi_fake_device_free(recv);
}

// MPI_Alltoallw on fake device buffers (staged) and MPI_Ineighbor_alltoall on host buffers (the base
// MPI), whose rows follow the routed collectives'.
void block_collectives(int rank, int size) {
  int* send = static_cast<int*>(mcrpmpi_fake_device_alloc(static_cast<std::size_t>(size) * sizeof(int)));
  int* recv = static_cast<int*>(mcrpmpi_fake_device_alloc(static_cast<std::size_t>(size) * sizeof(int)));
  std::vector<int> ones(static_cast<std::size_t>(size), 1), displs(static_cast<std::size_t>(size));
  std::vector<MPI_Datatype> ints(static_cast<std::size_t>(size), MPI_INT);
  for (int r = 0; r < size; ++r) displs[r] = r * static_cast<int>(sizeof(int));
  for (int i = 0; i < kDeviceAlltoallws; ++i) {
    for (int r = 0; r < size; ++r) send[r] = rank * 100 + r + i;
    MPI_Alltoallw(send, ones.data(), displs.data(), ints.data(), recv, ones.data(), displs.data(), ints.data(),
                  MPI_COMM_WORLD);
    expect_equal(static_cast<float>(recv[size - 1]), static_cast<float>((size - 1) * 100 + rank + i), "device alltoallw");
  }
  mcrpmpi_fake_device_free(send);
  mcrpmpi_fake_device_free(recv);
  MPI_Comm ring;
  const int dims[1] = {size}, periodic[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periodic, 0, &ring);
  int out[kRingNeighbors] = {rank, rank}, in[kRingNeighbors] = {-1, -1};
  for (int i = 0; i < kHostNeighborAlltoalls; ++i) {
    MPI_Request request;
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect_equal(static_cast<float>(in[1]), static_cast<float>((rank + 1) % size), "host neighbor alltoall");
  }
  MPI_Comm_free(&ring);
}

// The local calls: packs and unpacks of fake device memory (staged) and MPI_Reduce_local on host
// buffers (the base MPI), in their own rows.
void local_calls(int rank) {
  float* data = device_floats();
  std::vector<char> packed(kCount * sizeof(float));
  for (int i = 0; i < kDevicePacks; ++i) {
    fill(data, static_cast<float>(rank + i));
    int position = 0;
    MPI_Pack(data, kCount, MPI_FLOAT, packed.data(), static_cast<int>(packed.size()), &position, MPI_COMM_WORLD);
    fill(data, -1.0f);
    position = 0;
    MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position, data, kCount, MPI_FLOAT, MPI_COMM_WORLD);
    expect_equal(data[3], static_cast<float>(rank + i + 3), "device pack and unpack");
  }
  mcrpmpi_fake_device_free(data);
  std::vector<float> in(kCount, 1.0f), inout(kCount, 2.0f);
  for (int i = 0; i < kHostReduceLocals; ++i) {
    MPI_Reduce_local(in.data(), inout.data(), kCount, MPI_FLOAT, MPI_SUM);
  }
  expect_equal(inout[0], 2.0f + kHostReduceLocals, "host reduce_local");
}

void point_to_point(int rank, int size) {
  if (size < 2 || rank > 1) return;
  float* device = device_floats();
  std::vector<float> host(kCount);
  for (int i = 0; i < kDeviceMessages; ++i) {
    if (rank == 0) {
      fill(device, static_cast<float>(i));
      MPI_Send(device, kCount, MPI_FLOAT, 1, i, MPI_COMM_WORLD);
    } else {
      MPI_Recv(device, kCount, MPI_FLOAT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect_equal(device[1], static_cast<float>(i + 1), "device message");
    }
  }
  for (int i = 0; i < kHostMessages; ++i) {
    if (rank == 0) {
      fill(host.data(), 10.0f);
      MPI_Send(host.data(), kCount, MPI_FLOAT, 1, i, MPI_COMM_WORLD);
    } else {
      MPI_Recv(host.data(), kCount, MPI_FLOAT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      expect_equal(host[0], 10.0f, "host message");
    }
  }
  mcrpmpi_fake_device_free(device);
}

// Partitioned point-to-point: rounds on fake device memory, each readying its partitions with
// every MPI_Pready form while the receiver polls MPI_Parrived for each, then one round on host
// memory. Returns on rank 0 the receiver's MPI_Parrived calls (the polls vary from run to run).
int partitioned(int rank, int size) {
  if (size < 2 || rank > 1) return 0;
  float* device = device_floats();
  MPI_Request request;
  if (rank == 0) {
    MPI_Psend_init(device, kCount, 1, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  } else {
    MPI_Precv_init(device, kCount, 1, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  }
  int polls = 0;
  for (int round = 0; round < kPartitionedRounds; ++round) {
    fill(device, rank == 0 ? static_cast<float>(round) : -1.0f);
    MPI_Start(&request);
    if (rank == 0) {
      int last[1] = {kCount - 1};
      MPI_Pready_range(0, kCount - 3, request);
      MPI_Pready(kCount - 2, request);
      MPI_Pready_list(1, last, request);
    } else {
      for (int partition = 0; partition < kCount; ++partition) {
        for (int flag = 0; !flag; ++polls) MPI_Parrived(request, partition, &flag);
      }
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (rank == 1) expect_equal(device[kCount - 1], static_cast<float>(round + kCount - 1), "device partitions");
  }
  MPI_Request_free(&request);
  mcrpmpi_fake_device_free(device);
  std::vector<float> host(kCount, rank == 0 ? 7.0f : -1.0f);
  if (rank == 0) {
    MPI_Psend_init(host.data(), 1, kCount, MPI_FLOAT, 1, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  } else {
    MPI_Precv_init(host.data(), 1, kCount, MPI_FLOAT, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  }
  MPI_Start(&request);
  if (rank == 0) MPI_Pready_range(0, 0, request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Request_free(&request);
  if (rank == 1) expect_equal(host[kCount - 1], 7.0f, "host partitions");
  // The base MPI's own calls: not in the profile.
  if (rank == 1) PMPI_Send(&polls, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  if (rank == 0) PMPI_Recv(&polls, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return polls;
}

void print_expected(int size, int parrived_polls) {
  // A CUDA-aware base MPI gets device buffers as they are where they would be staged.
  const char* device_base = mcrp_test::base_takes_device_buffers() ? "direct" : "staged";
  if (size == 1) {  // WORLD is a one-rank communicator too
    std::printf("expect MPI_Allreduce blocking local_copy %d\n", kDeviceAllreduces + kSelfAllreduces);
    std::printf("expect MPI_Allreduce start local_copy %d\n", kDeviceIallreduces);
  } else {
    std::printf("expect MPI_Allreduce blocking %s %d\n", device_base, kDeviceAllreduces * size);
    std::printf("expect MPI_Allreduce start %s %d\n", device_base, kDeviceIallreduces * size);
    std::printf("expect MPI_Allreduce blocking local_copy %d\n", kSelfAllreduces * size);
  }
  std::printf("expect MPI_Bcast blocking mpi %d\n", kHostBcasts * size);
  std::printf("expect MPI_Alltoallw blocking %s %d\n", device_base, kDeviceAlltoallws * size);
  std::printf("expect MPI_Neighbor_alltoall start mpi %d\n", kHostNeighborAlltoalls * size);
  std::printf("expect MPI_Pack blocking %s %d\n", device_base, kDevicePacks * size);
  std::printf("expect MPI_Unpack blocking %s %d\n", device_base, kDevicePacks * size);
  std::printf("expect MPI_Reduce_local blocking mpi %d\n", kHostReduceLocals * size);
  // MCRPMPI_STATS's rows (collectives only, forms together): calls and bytes summed over ranks,
  // bytes being each call's message size per rank (what a rank receives, for MPI_Alltoallw and
  // the neighborhood collectives).
  const int floats = kCount * static_cast<int>(sizeof(float));
  const auto stats_row = [](const char* operation, const char* path, int calls, int bytes_per_call) {
    std::printf("expect-stats %s %s %d %d\n", operation, path, calls, calls * bytes_per_call);
  };
  if (size == 1) {
    stats_row("MPI_Allreduce", "local_copy", kDeviceAllreduces + kSelfAllreduces + kDeviceIallreduces, floats);
  } else {
    stats_row("MPI_Allreduce", device_base, (kDeviceAllreduces + kDeviceIallreduces) * size, floats);
    stats_row("MPI_Allreduce", "local_copy", kSelfAllreduces * size, floats);
  }
  stats_row("MPI_Bcast", "mpi", kHostBcasts * size, floats);
  stats_row("MPI_Alltoallw", device_base, kDeviceAlltoallws * size, size * static_cast<int>(sizeof(int)));
  stats_row("MPI_Neighbor_alltoall", "mpi", kHostNeighborAlltoalls * size, kRingNeighbors * static_cast<int>(sizeof(int)));
  if (size > 1) {
    std::printf("expect MPI_Send blocking %s %d\n", device_base, kDeviceMessages);
    std::printf("expect MPI_Recv blocking %s %d\n", device_base, kDeviceMessages);
    std::printf("expect MPI_Send blocking mpi %d\n", kHostMessages);
    std::printf("expect MPI_Recv blocking mpi %d\n", kHostMessages);
    // Partitioned rows: the init calls' `start` form is the request's MPI_Start (a host request's
    // MPI_Start is the base MPI's own, untimed).
    for (const char* init : {"MPI_Psend_init", "MPI_Precv_init"}) {
      std::printf("expect %s blocking %s 1\n", init, device_base);
      std::printf("expect %s start %s %d\n", init, device_base, kPartitionedRounds);
      std::printf("expect %s blocking mpi 1\n", init);
    }
    for (const char* ready : {"MPI_Pready", "MPI_Pready_range", "MPI_Pready_list"}) {
      std::printf("expect %s blocking %s %d\n", ready, device_base, kPartitionedRounds);
    }
    std::printf("expect MPI_Pready_range blocking mpi 1\n");
    std::printf("expect MPI_Parrived blocking %s %d\n", device_base, parrived_polls);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  void* probe = mcrpmpi_fake_device_alloc(1);
  if (probe == nullptr) {
    if (rank == 0) std::printf("SKIPPED: needs MCRPMPI_FAKE_DEVICE=1\n");
    MPI_Finalize();
    return kSkip;
  }
  mcrpmpi_fake_device_free(probe);
  collectives(rank, size);
  block_collectives(rank, size);
  local_calls(rank);
  point_to_point(rank, size);
  const int parrived_polls = partitioned(rank, size);
  if (rank == 0) print_expected(size, parrived_polls);
  int failures = 0;
  PMPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && failures > 0) std::printf("FAILED: %d wrong results\n", failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
