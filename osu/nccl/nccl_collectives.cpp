#include "nccl_collectives.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "osu/core/gpu.h"

namespace osu::nccl {
namespace {

// One communicator and stream for the whole run: the calls are plain function pointers.
ncclComm_t g_comm = nullptr;
cudaStream_t g_stream = nullptr;
int g_rank = 0;
int g_ranks = 1;

void check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::fprintf(stderr, "osu_nccl: %s failed: %s\n", what, ncclGetErrorString(r));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void check(cudaError_t r, const char* what) {
  if (r == cudaSuccess) return;
  std::fprintf(stderr, "osu_nccl: %s failed: %s\n", what, cudaGetErrorString(r));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

ncclDataType_t nccl_type(MPI_Datatype t) {
  if (t == MPI_INT) return ncclInt32;
  if (t == MPI_FLOAT) return ncclFloat32;
  if (t == MPI_DOUBLE) return ncclFloat64;
  return ncclInt8;  // MPI_CHAR: bytes
}

// NCCL refuses two ranks on one GPU unless each believes it is on its own host (FIELD-NOTES): when
// a node has more ranks than GPUs, give every rank its own NCCL_HOSTID before NCCL starts. Slow
// (socket transport), so it is said in the output.
void share_gpus_if_needed(MPI_Comm comm) {
  const int local_ranks = node_place(comm).ranks;
  if (local_ranks <= cuda_device_count() || std::getenv("NCCL_HOSTID")) return;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string id = std::string(host) + "-osu-rank-" + std::to_string(g_rank);
  setenv("NCCL_HOSTID", id.c_str(), 1);
  if (g_rank == 0)
    std::printf("# %d ranks share %d GPU(s): NCCL_HOSTID set per rank (socket transport, slow)\n",
                local_ranks, cuda_device_count());
}

void setup(MPI_Comm comm) {
  MPI_Comm_rank(comm, &g_rank);
  MPI_Comm_size(comm, &g_ranks);
  share_gpus_if_needed(comm);
  ncclUniqueId id;
  if (g_rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  check(ncclCommInitRank(&g_comm, g_ranks, id, g_rank), "ncclCommInitRank");
  check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

void teardown() {
  if (g_comm) check(ncclCommDestroy(g_comm), "ncclCommDestroy");
  if (g_stream) cudaStreamDestroy(g_stream);
  g_comm = nullptr;
  g_stream = nullptr;
}

// Completes what was queued on the stream: the time of a call is launch to completion.
void finish(ncclResult_t launched, const char* what) {
  check(launched, what);
  check(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
}

std::size_t at(const void* base, const CallArgs& a, int block) {
  int size = 1;
  MPI_Type_size(a.type, &size);
  return reinterpret_cast<std::size_t>(base) + static_cast<std::size_t>(block) * a.count * size;
}

// Point-to-point rounds in one group, for the collectives NCCL builds from send/recv.
void alltoall(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  check(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < g_ranks; ++r) {
    check(ncclSend(reinterpret_cast<const void*>(at(a.send, a, r)), a.count, t, r, g_comm, g_stream), "ncclSend");
    check(ncclRecv(reinterpret_cast<void*>(at(a.recv, a, r)), a.count, t, r, g_comm, g_stream), "ncclRecv");
  }
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

void gather(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  check(ncclGroupStart(), "ncclGroupStart");
  if (g_rank == a.root)
    for (int r = 0; r < g_ranks; ++r)
      check(ncclRecv(reinterpret_cast<void*>(at(a.recv, a, r)), a.count, t, r, g_comm, g_stream), "ncclRecv");
  check(ncclSend(a.send, a.count, t, a.root, g_comm, g_stream), "ncclSend");
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

void scatter(const CallArgs& a) {
  ncclDataType_t t = nccl_type(a.type);
  check(ncclGroupStart(), "ncclGroupStart");
  if (g_rank == a.root)
    for (int r = 0; r < g_ranks; ++r)
      check(ncclSend(reinterpret_cast<const void*>(at(a.send, a, r)), a.count, t, r, g_comm, g_stream), "ncclSend");
  check(ncclRecv(a.recv, a.count, t, a.root, g_comm, g_stream), "ncclRecv");
  finish(ncclGroupEnd(), "ncclGroupEnd");
}

CollectiveSpec spec(const char* name, Shape shape, void (*call)(const CallArgs&)) {
  CollectiveSpec s{name, shape, call, nullptr};
  s.device_only = true;
  s.bandwidth = true;
  s.setup = setup;
  s.teardown = teardown;
  return s;
}

struct Entry {
  const char* option;
  CollectiveSpec spec;
};

const Entry kEntries[] = {
    {"allreduce", spec("NCCL AllReduce", Shape::all_reduce, [](const CallArgs& a) {
       finish(ncclAllReduce(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, g_comm, g_stream), "ncclAllReduce");
     })},
    {"reduce", spec("NCCL Reduce", Shape::root_reduce, [](const CallArgs& a) {
       finish(ncclReduce(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, a.root, g_comm, g_stream), "ncclReduce");
     })},
    {"bcast", spec("NCCL Broadcast", Shape::broadcast, [](const CallArgs& a) {
       finish(ncclBroadcast(a.recv, a.recv, a.count, nccl_type(a.type), a.root, g_comm, g_stream), "ncclBroadcast");
     })},
    {"allgather", spec("NCCL AllGather", Shape::all_gather, [](const CallArgs& a) {
       finish(ncclAllGather(a.send, a.recv, a.count, nccl_type(a.type), g_comm, g_stream), "ncclAllGather");
     })},
    {"reduce_scatter", spec("NCCL ReduceScatter", Shape::reduce_scatter, [](const CallArgs& a) {
       finish(ncclReduceScatter(a.send, a.recv, a.count, nccl_type(a.type), ncclSum, g_comm, g_stream),
              "ncclReduceScatter");
     })},
    {"alltoall", spec("NCCL AlltoAll (send/recv)", Shape::all_to_all, alltoall)},
    {"gather", spec("NCCL Gather (send/recv)", Shape::root_gather, gather)},
    {"scatter", spec("NCCL Scatter (send/recv)", Shape::root_scatter, scatter)},
};

}  // namespace

const CollectiveSpec* find_collective(const std::string& name) {
  for (const Entry& e : kEntries)
    if (name == e.option) return &e.spec;
  return nullptr;
}

const char* collective_names() {
  return "allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter";
}

}  // namespace osu::nccl
