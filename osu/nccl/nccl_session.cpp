#include "nccl_session.h"

#include <unistd.h>

#include <algorithm>
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

bool read_steps() {
  const char* text = std::getenv("OSU_NCCL_STEPS");
  if (text == nullptr || *text == '\0') return true;
  struct Named {
    const char* name;
    unsigned bits;
  };
  constexpr Named kNamed[] = {{"device", kStepDevice}, {"order", kStepOrder}, {"event", kStepEvent},
                              {"progress", kStepProgress | kStepEvent},
                              {"all", kStepDevice | kStepOrder | kStepEvent | kStepProgress}};
  const std::string list(text);
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string name = list.substr(from, comma - from);
    unsigned bits = 0;
    for (const Named& n : kNamed)
      if (name == n.name) bits = n.bits;
    if (bits == 0) {
      std::fprintf(stderr, "osu_nccl: OSU_NCCL_STEPS: unknown step '%s' (device, order, event, progress, all)\n",
                   name.c_str());
      return false;
    }
    session().steps |= bits;
    from = comma + 1;
  }
  return true;
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
  if (s.steps != 0 && s.rank == 0)
    std::printf("# OSU_NCCL_STEPS=%s: the library's direct-path steps on raw NCCL\n", std::getenv("OSU_NCCL_STEPS"));
  if (s.steps & kStepEvent) check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "cudaEventCreate");
  if (s.steps & kStepOrder) check(cudaEventCreateWithFlags(&s.legacy_done, cudaEventDisableTiming), "cudaEventCreate");
  if (s.steps & kStepProgress) MPI_Comm_dup(MPI_COMM_SELF, &s.progress_comm);
}

void teardown() {
  Session& s = session();
  if (s.comm) check(ncclCommDestroy(s.comm), "ncclCommDestroy");
  if (s.stream) cudaStreamDestroy(s.stream);
  if (s.done) cudaEventDestroy(s.done);
  if (s.legacy_done) cudaEventDestroy(s.legacy_done);
  if (s.progress_comm != MPI_COMM_NULL) MPI_Comm_free(&s.progress_comm);
  s = Session{};
}

cudaStream_t launch_stream() {
  Session& s = session();
  if (s.steps & kStepDevice) {
    int device = 0;
    for (int i = 0; i < 3; ++i) check(cudaGetDevice(&device), "cudaGetDevice");
  }
  if (s.steps & kStepOrder) {
    const cudaError_t idle = cudaStreamQuery(cudaStreamLegacy);
    if (idle == cudaErrorNotReady) {
      check(cudaEventRecord(s.legacy_done, cudaStreamLegacy), "cudaEventRecord (legacy stream)");
      check(cudaStreamWaitEvent(s.stream, s.legacy_done, 0), "cudaStreamWaitEvent");
    } else {
      check(idle, "cudaStreamQuery (legacy stream)");
    }
  }
  return s.stream;
}

void finish(ncclResult_t launched, const char* what) {
  check(launched, what);
  const Session& s = session();
  if (s.nonblocking) wait_until_launched(what);
  if ((s.steps & kStepEvent) == 0) {
    check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
    return;
  }
  check(cudaEventRecord(s.done, s.stream), "cudaEventRecord");
  for (;;) {
    const cudaError_t state = cudaEventQuery(s.done);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) check(state, "cudaEventQuery");
    if (s.steps & kStepProgress) {
      int flag = 0;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s.progress_comm, &flag, MPI_STATUS_IGNORE);
    }
  }
}

}  // namespace osu::nccl
