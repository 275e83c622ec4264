#include "nccl_session.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "osu/core/gpu.h"

namespace osu::nccl {
namespace {

// NCCL refuses two ranks on one GPU unless each believes it is on its own host (FIELD-NOTES): when
// a node has more ranks than GPUs, give every rank its own NCCL_HOSTID before NCCL starts. Slow
// (socket transport), so it is said in the output.
void share_gpus_if_needed(MPI_Comm comm, int rank) {
  const int local_ranks = node_place(comm).ranks;
  if (local_ranks <= cuda_device_count() || std::getenv("NCCL_HOSTID")) return;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string id = std::string(host) + "-osu-rank-" + std::to_string(rank);
  setenv("NCCL_HOSTID", id.c_str(), 1);
  if (rank == 0)
    std::printf("# %d ranks share %d GPU(s): NCCL_HOSTID set per rank (socket transport, slow)\n",
                local_ranks, cuda_device_count());
}

}  // namespace

// A nonblocking communicator's pending operation (initialisation, a group's launch) is over when its
// asynchronous error leaves ncclInProgress.
static void wait_until_launched(const char* what) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) check(ncclCommGetAsyncError(session().comm, &state), "ncclCommGetAsyncError");
  if (state != ncclSuccess) check(state, what);
}

Session& session() {
  static Session instance;
  return instance;
}

void check(ncclResult_t result, const char* what) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  std::fprintf(stderr, "osu_nccl: %s failed: %s\n", what, ncclGetErrorString(result));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void check(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "osu_nccl: %s failed: %s\n", what, cudaGetErrorString(result));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void setup(MPI_Comm comm) {
  Session& s = session();
  MPI_Comm_rank(comm, &s.rank);
  MPI_Comm_size(comm, &s.ranks);
  share_gpus_if_needed(comm, s.rank);
  ncclUniqueId id;
  if (s.rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  const char* nonblocking = std::getenv("OSU_NCCL_NONBLOCKING_COMM");
  s.nonblocking = nonblocking != nullptr && std::strcmp(nonblocking, "1") == 0;
  if (s.nonblocking) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    check(ncclCommInitRankConfig(&s.comm, s.ranks, id, s.rank, &config), "ncclCommInitRankConfig");
    wait_until_launched("ncclCommInitRankConfig");
    if (s.rank == 0) std::printf("# nonblocking NCCL communicator (OSU_NCCL_NONBLOCKING_COMM=1)\n");
  } else {
    check(ncclCommInitRank(&s.comm, s.ranks, id, s.rank), "ncclCommInitRank");
  }
  check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
}

void teardown() {
  Session& s = session();
  if (s.comm) check(ncclCommDestroy(s.comm), "ncclCommDestroy");
  if (s.stream) cudaStreamDestroy(s.stream);
  s.comm = nullptr;
  s.stream = nullptr;
}

void finish(ncclResult_t launched, const char* what) {
  check(launched, what);
  if (session().nonblocking) wait_until_launched(what);
  check(cudaStreamSynchronize(session().stream), "cudaStreamSynchronize");
}

}  // namespace osu::nccl
