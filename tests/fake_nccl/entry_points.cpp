// The NCCL entry points the library loads (runtime/nccl_api.h), implemented on fake communicators.
// Loaded only through MCRPMPI_NCCL_LIBRARY together with MCRPMPI_FAKE_DEVICE=1 (device/fake_device.h).
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/fake_nccl/device_model.h"
#include "tests/fake_nccl/fake_comm.h"
#include "tests/fake_nccl/operations.h"
#include "tests/fake_nccl/reduction.h"

using fake_nccl::Comm;
using fake_nccl::Place;
using fake_nccl::Work;

namespace {

constexpr int kFakeVersion = 22809;  // claims 2.28.9: the optional AlltoAll, Gather and Scatter exist

#define FAKE_TRY(expression)                     \
  do {                                           \
    const ncclResult_t rc_ = (expression);       \
    if (rc_ != ncclSuccess) return rc_;          \
  } while (0)

thread_local std::string t_last_error;

ncclResult_t refuse(const std::string& why) {
  t_last_error = "fake NCCL: " + why;
  return ncclInvalidArgument;
}

Comm* comm_of(ncclComm_t handle) { return reinterpret_cast<Comm*>(handle); }

// Calls between ncclGroupStart and ncclGroupEnd collect here, per thread, and are submitted at the
// outermost ncclGroupEnd: point-to-point first, then collectives, each in call order, so that two
// ranks that interleave them differently still list every peer's streams alike.
struct Pending {
  Comm* comm;
  bool point_to_point;
  Work work;
};
thread_local int t_group_depth = 0;
thread_local std::vector<Pending> t_group;

// The library's fake device in its async mode queues copies (device/fake_device.h); a real NCCL
// kernel runs after the copies issued before it on its stream, so every launch here runs that queue
// first (this fake reads buffers from its own thread, in no stream order).
void complete_earlier_copies() {
  using Synchronize = void (*)();
  static const auto synchronize = reinterpret_cast<Synchronize>(dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_synchronize"));
  if (synchronize != nullptr) synchronize();
}

ncclResult_t issue(ncclComm_t handle, Work work, bool point_to_point, cudaStream_t stream) {
  complete_earlier_copies();
  Comm* comm = comm_of(handle);
  fake_nccl::device_model::note_stream(stream, comm);
  if (t_group_depth > 0) {
    t_group.push_back({comm, point_to_point, std::move(work)});
    return ncclSuccess;
  }
  fake_nccl::device_model::Launch launch;
  return comm->submit(std::move(work));
}

ncclResult_t check_comm(ncclComm_t handle) { return handle == nullptr ? refuse("null communicator") : ncclSuccess; }

ncclResult_t check_root(ncclComm_t handle, int root) {
  if (root < 0 || root >= comm_of(handle)->nranks) return refuse("root " + std::to_string(root) + " out of range");
  return ncclSuccess;
}

ncclResult_t check_buffers(const void* a, const void* b, std::size_t count) {
  if (count > 0 && (a == nullptr || b == nullptr)) return refuse("null buffer with a nonzero count");
  return ncclSuccess;
}

ncclResult_t check_type(ncclDataType_t type, ncclRedOp_t op = ncclSum) {
  if (!fake_nccl::supported(type, op)) return refuse("unsupported datatype or reduction op");
  return ncclSuccess;
}

constexpr int kNoRoot = -1;

// What NCCL checks before it accepts a call: the communicator, the datatype (and op), the root or
// peer, and that buffers with data are not null.
ncclResult_t check_call(ncclComm_t comm, ncclDataType_t type, ncclRedOp_t op, int root, const void* a, const void* b,
                        std::size_t count) {
  FAKE_TRY(check_comm(comm));
  FAKE_TRY(check_type(type, op));
  if (root != kNoRoot) FAKE_TRY(check_root(comm, root));
  return check_buffers(a, b, count);
}

// The buffer a rooted call reads or writes on this rank: `at_root` on the root, else `elsewhere`.
const void* rooted(ncclComm_t comm, int root, const void* at_root, const void* elsewhere) {
  return comm_of(comm)->rank == root ? at_root : elsewhere;
}

Place place(ncclComm_t handle) { return Place{comm_of(handle)->rank, comm_of(handle)->nranks}; }

std::size_t bytes_of(std::size_t count, ncclDataType_t type) { return count * fake_nccl::type_size(type); }

Work opening_streams(Work work) {
  work.opens_streams();
  return work;
}

// MCRPMPI_FAKE_NCCL_SETUP_WAITS=1: the setup call first waits for the work in flight, as NCCL's may
// at its page-locked allocation (device_model.h, wait_for_earlier_work), on blocking and nonblocking
// communicators alike. Off by default: on the H200 cudaMallocHost did not wait (docs/routing.md, "Streams").
bool setup_waits_for_work() {
  static const bool on = [] {
    const char* value = std::getenv("MCRPMPI_FAKE_NCCL_SETUP_WAITS");
    return value != nullptr && value[0] == '1';
  }();
  return on;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return refuse("null version");
  *version = kFakeVersion;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return refuse("null id");
  static std::atomic<unsigned> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::memset(id->internal, 0, sizeof id->internal);
  std::snprintf(id->internal, sizeof id->internal, "/mcrpmpi-fake-nccl-%d-%u-%llx", static_cast<int>(getpid()),
                counter.fetch_add(1), static_cast<unsigned long long>(now));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  if (out == nullptr) return refuse("null communicator pointer");
  if (setup_waits_for_work()) fake_nccl::device_model::wait_for_earlier_work();
  if (nranks < 1 || rank < 0 || rank >= nranks) return refuse("rank " + std::to_string(rank) + " of " + std::to_string(nranks));
  if (std::strncmp(id.internal, "/mcrpmpi-fake-nccl-", 19) != 0) return refuse("not a fake NCCL unique id");
  const bool blocking = config == nullptr || config->blocking != 0;
  auto* comm = new Comm(nranks, rank, blocking);
  *out = reinterpret_cast<ncclComm_t>(comm);
  std::string name(id.internal, strnlen(id.internal, sizeof id.internal));
  if (!comm->start(name)) return comm->state();
  if (!blocking) return comm->state();
  ncclResult_t state;
  while ((state = comm->state()) == ncclInProgress) usleep(50);
  return state;
}

ncclResult_t ncclCommInitRank(ncclComm_t* out, int nranks, ncclUniqueId id, int rank) {
  return ncclCommInitRankConfig(out, nranks, id, rank, nullptr);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
  FAKE_TRY(check_comm(comm));
  if (state == nullptr) return refuse("null state");
  *state = comm_of(comm)->state();
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  FAKE_TRY(check_comm(comm));
  return comm_of(comm)->finalize();
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  fake_nccl::device_model::synchronize_device();
  delete comm_of(comm);
  return ncclSuccess;
}

// Not NCCL's: the library's fake device calls it at each free and pinned allocation it makes, as
// cudaFree and cudaFreeHost wait for the kernels in flight, and cudaMallocHost may
// (device/fake_device.h, set_fake_kernel_wait).
extern "C" void mcrpmpi_fake_nccl_wait_for_kernels() { fake_nccl::device_model::synchronize_device(); }

// Not NCCL's either: a copy the library's fake device makes to or from pageable memory on `stream`
// waits for the NCCL work launched on it, as CUDA may make such a copy wait for its stream
// (device/fake_device.h, set_fake_stream_wait).
extern "C" void mcrpmpi_fake_nccl_wait_for_stream(cudaStream_t stream) {
  fake_nccl::device_model::wait_for_stream(stream);
}

// Not NCCL's: a CUDA call of the library's fake device (an event record) enters the context as a
// launch does, so it waits while a device synchronization holds it (device/fake_device.h,
// set_fake_context_gate).
extern "C" void mcrpmpi_fake_nccl_enter_context() { fake_nccl::device_model::enter_context(); }
extern "C" void mcrpmpi_fake_nccl_leave_context() { fake_nccl::device_model::leave_context(); }

// Late kernels (MCRPMPI_FAKE_NCCL_LATE, fake_comm.h): the fake device's events on an NCCL
// communicator's stream complete when the work launched on it before them is done. The library
// uses these two only when mcrpmpi_fake_nccl_late_kernels() says so.
extern "C" std::uint64_t mcrpmpi_fake_nccl_stream_mark(cudaStream_t stream) {
  return fake_nccl::device_model::stream_mark(stream);
}
extern "C" int mcrpmpi_fake_nccl_stream_reached(cudaStream_t stream, std::uint64_t mark) {
  return fake_nccl::device_model::stream_reached(stream, mark) ? 1 : 0;
}
extern "C" int mcrpmpi_fake_nccl_run_after(cudaStream_t stream, void (*run)(void*), void* arg) {
  return fake_nccl::device_model::run_after(stream, run, arg) ? 1 : 0;
}
extern "C" int mcrpmpi_fake_nccl_late_kernels() { return fake_nccl::late_kernels() ? 1 : 0; }

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm_of(comm);
  return ncclSuccess;
}

// Stops the work in flight: the worker leaves, and the communicator reports the failure until it
// is aborted or destroyed (NCCL reports ncclSuccess once quiescent; the library only aborts after).
ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags) {
  FAKE_TRY(check_comm(comm));
  if (flags != 0) return refuse("revoke flags must be 0");
  comm_of(comm)->revoke();
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  FAKE_TRY(check_comm(comm));
  *count = comm_of(comm)->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  FAKE_TRY(check_comm(comm));
  *rank = comm_of(comm)->rank;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (fake)";
    case ncclSystemError: return "unhandled system error (fake)";
    case ncclInternalError: return "internal error (fake)";
    case ncclInvalidArgument: return "invalid argument (fake)";
    case ncclInvalidUsage: return "invalid usage (fake)";
    case ncclRemoteError: return "remote process exited or there was a network error (fake)";
    case ncclInProgress: return "NCCL operation in progress (fake)";
    default: return "unknown result code (fake)";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  if (comm != nullptr) {
    const std::string error = comm_of(comm)->last_error();
    if (!error.empty()) t_last_error = error;
  }
  return t_last_error.c_str();
}

ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return refuse("ncclGroupEnd without ncclGroupStart");
  if (--t_group_depth > 0) return ncclSuccess;
  std::vector<Pending> group = std::move(t_group);
  t_group.clear();
  // One submission per communicator, in the order the communicators first appeared.
  fake_nccl::device_model::Launch launch;
  ncclResult_t result = ncclSuccess;
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (group[i].comm == nullptr) continue;
    Comm* comm = group[i].comm;
    Work merged;
    for (bool p2p : {true, false}) {
      for (std::size_t j = i; j < group.size(); ++j) {
        if (group[j].comm != comm || group[j].point_to_point != p2p) continue;
        merged.append(std::move(group[j].work));
      }
    }
    for (std::size_t j = i; j < group.size(); ++j) {
      if (group[j].comm == comm) group[j].comm = nullptr;
    }
    const ncclResult_t rc = comm->submit(std::move(merged));
    if (rc != ncclSuccess && (result == ncclSuccess || result == ncclInProgress)) result = rc;
  }
  return result;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, op, kNoRoot, send, recv, count));
  return issue(comm, fake_nccl::all_reduce(place(comm), send, recv, count, type, op), false, stream);
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, op, root, send, rooted(comm, root, recv, send), count));
  return issue(comm, fake_nccl::reduce(place(comm), send, recv, count, type, op, root), false, stream);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, op, kNoRoot, send, recv, count));
  return issue(comm, fake_nccl::reduce_scatter(place(comm), send, recv, count, type, op), false, stream);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, root, rooted(comm, root, send, recv), recv, count));
  return issue(comm, fake_nccl::broadcast(place(comm), send, recv, bytes_of(count, type), root), false, stream);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, kNoRoot, send, recv, count));
  return issue(comm, fake_nccl::all_gather(place(comm), send, recv, bytes_of(count, type)), false, stream);
}

ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                          cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, kNoRoot, send, recv, count));
  return issue(comm, opening_streams(fake_nccl::all_to_all(place(comm), send, recv, bytes_of(count, type))), false, stream);
}

ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, root, send, rooted(comm, root, recv, send), count));
  return issue(comm, opening_streams(fake_nccl::gather(place(comm), send, recv, bytes_of(count, type), root)), false,
               stream);
}

ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                         cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, root, rooted(comm, root, send, recv), recv, count));
  return issue(comm, opening_streams(fake_nccl::scatter(place(comm), send, recv, bytes_of(count, type), root)), false,
               stream);
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, peer, send, send, count));
  Work work;
  work.send(peer, send, bytes_of(count, type));
  work.opens_to.push_back(peer);  // even when empty: NCCL connects for those too
  return issue(comm, std::move(work), true, stream);
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
  FAKE_TRY(check_call(comm, type, ncclSum, peer, recv, recv, count));
  Work work;
  work.receive(peer, recv, bytes_of(count, type));
  work.opens_from.push_back(peer);
  return issue(comm, std::move(work), true, stream);
}

}  // extern "C"
