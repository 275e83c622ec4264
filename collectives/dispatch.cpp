#include "collectives/dispatch.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <new>
#include <utility>

#include "collectives/comm_facts.h"
#include "collectives/config.h"
#include "collectives/errors.h"
#include "collectives/nccl_comm.h"
#include "collectives/nccl_types.h"
#include "collectives/requests.h"
#include "collectives/requests_persistent.h"
#include "collectives/route.h"
#include "collectives/stats.h"
#include "device/cuda_runtime.h"

namespace mcrp {
namespace {

using Clock = std::chrono::steady_clock;

// Whether the base MPI takes device pointers itself (then staging copies are skipped). Looked up by
// name: other MPICH-ABI libraries (Intel MPI) may not have the MPICH extension.
bool base_mpi_cuda_aware() {
  static const bool aware = [] {
    using QueryFn = int (*)();
    auto query = reinterpret_cast<QueryFn>(dlsym(RTLD_DEFAULT, "PMPIX_Query_cuda_support"));
    return query != nullptr && query() == 1;
  }();
  return aware;
}

struct LocalMemory {
  bool device = false;
  int ordinal = -1;
};

LocalMemory classify(const Layout& layout) {
  LocalMemory memory;
  for (const BufferSide* side : {&layout.send, &layout.recv}) {
    if (!side->significant()) continue;
    const device::PointerInfo info = device::locate(side->base);
    if (info.kind == device::MemoryKind::device && !memory.device) {
      memory.device = true;
      memory.ordinal = info.device;
    }
  }
  return memory;
}

// MCRPMPI_VERIFY: one small allreduce tells whether ranks disagree on host versus device buffers.
bool memory_disagrees(bool local_device, MPI_Comm comm) {
  int flags[2] = {local_device ? 1 : 0, local_device ? 0 : 1};
  int any[2] = {0, 0};
  PMPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, comm);
  const bool disagree = any[0] == 1 && any[1] == 1;
  static bool warned = false;
  if (disagree && !warned) {
    warned = true;
    std::fprintf(stderr, "mcrpmpi: warning: ranks passed host buffers and device buffers to one collective; "
                         "using the base MPI for such calls (see README, 'Memory types must match')\n");
  }
  return disagree;
}

std::uint64_t sum_counts(const CountArray& counts, int size) {
  std::uint64_t total = 0;
  for (int i = 0; i < size; ++i) total += static_cast<std::uint64_t>(counts[i]);
  return total;
}

// The message size every rank of the call agrees on, in OSU's per-rank convention.
std::uint64_t agreed_bytes(const Prepared& p) {
  const CollCall& c = *p.call;
  const auto s = static_cast<std::uint64_t>(p.send_type.size);
  const auto r = static_cast<std::uint64_t>(p.recv_type.size);
  const bool root = p.rank == c.root;
  switch (c.kind) {
    case CollKind::allreduce:
    case CollKind::reduce:
    case CollKind::scan:
    case CollKind::exscan:
    case CollKind::bcast:
    case CollKind::allgather:
    case CollKind::alltoall:
    case CollKind::reduce_scatter_block:
      return static_cast<std::uint64_t>(c.recvcount) * r;
    case CollKind::gather: return root ? c.recvcount * r : c.sendcount * s;
    case CollKind::scatter: return root ? c.sendcount * s : c.recvcount * r;
    case CollKind::reduce_scatter: return sum_counts(c.recvcounts, p.size) * r;
    case CollKind::allgatherv: return sum_counts(c.recvcounts, p.size) * r / static_cast<std::uint64_t>(p.size);
    case CollKind::barrier: return 0;
    default: return tuning::kUnknownSize;  // alltoallv, gatherv, scatterv: per-rank sizes differ
  }
}

std::uint64_t local_bytes(const Prepared& p) {
  const bool receives = p.layout.recv.significant();
  const BufferSide& side = receives ? p.layout.recv : p.layout.send;
  const MPI_Count element = receives ? p.recv_type.size : p.send_type.size;
  return static_cast<std::uint64_t>(side.total_count() * element);
}

// Argument checks the base MPI would do, needed before device pointers reach NCCL or staging.
Status validate(const Prepared& p) {
  const CollCall& c = *p.call;
  if (c.sendcount < 0 || c.recvcount < 0) return Status(MPI_ERR_COUNT, "negative count");
  if (is_rooted(c.kind) && (c.root < 0 || c.root >= p.size)) return Status(MPI_ERR_ROOT, "invalid root");
  if (is_reduction(c.kind) && c.op == MPI_OP_NULL) return Status(MPI_ERR_OP, "MPI_OP_NULL");
  for (const BufferSide* side : {&p.layout.send, &p.layout.recv}) {
    for (const Block& b : side->blocks) {
      if (b.count < 0) return Status(MPI_ERR_COUNT, "negative count");
    }
  }
  return {};
}

Status prepare_types(Prepared& p) {
  const CollCall& c = *p.call;
  if (p.layout.send.significant()) MCRP_TRY(type_info(c.sendtype, &p.send_type));
  if (p.layout.recv.significant()) MCRP_TRY(type_info(c.recvtype, &p.recv_type));
  // Sizes used by agreed_bytes() also on ranks where a side is not significant (gather's root
  // reads recvtype, the others sendtype); a null type there stays size 0.
  if (!p.layout.send.significant() && c.sendtype != MPI_DATATYPE_NULL) type_info(c.sendtype, &p.send_type);
  if (!p.layout.recv.significant() && c.recvtype != MPI_DATATYPE_NULL) type_info(c.recvtype, &p.recv_type);
  return {};
}

void log_route(const Prepared& p, const Route& route, std::uint64_t bytes) {
  if (!config().debug) return;
  char rule[256] = "";
  if (route.by_table) tuning::describe_decision(route.query, route.decision, rule, sizeof rule);
  std::fprintf(stderr, "mcrpmpi[%d/%d]: %s bytes=%s -> %s (%s%s%s)\n", p.rank, p.size, mpi_name(p.call->kind),
               bytes == tuning::kUnknownSize ? "per-rank" : std::to_string(bytes).c_str(), path_name(route.path),
               route.reason, route.by_table ? ": " : "", rule);
}

// A failed call leaves no request behind.
int fail(const CollCall& call, int size, const Status& status, MPI_Request* request) {
  if (request != nullptr) *request = MPI_REQUEST_NULL;
  return raise_error(call.comm, call.kind, size, status);
}

// Runs the chosen path. Nonblocking mode starts it instead, leaving *request to complete it; a path
// with nothing to wait for (a one-rank copy) runs now and gets an already completed request.
Status run_path(Path path, const Prepared& p, const BaseCall& base, Mode mode, MPI_Request* request) {
  const bool nonblocking = mode == Mode::nonblocking;
  switch (path) {
    case Path::mpi: {
      const int rc = call_base(base, *p.call, p.call->sendbuf, p.call->recvbuf, request);
      return rc == MPI_SUCCESS ? Status() : already_raised(rc);
    }
    case Path::staged:
      return nonblocking ? start_staged(p, base, !base_mpi_cuda_aware(), request)
                         : run_staged(p, base, !base_mpi_cuda_aware());
    case Path::local_copy:
      MCRP_TRY(run_local_copy(p));
      return nonblocking ? start_completed(request) : Status();
    case Path::nccl: {
      std::shared_ptr<NcclComm> comm;
      MCRP_TRY(nccl_comm_for(p.call->comm, p.device, &comm));
      return nonblocking ? start_nccl(p, std::move(comm), request) : run_nccl(p, std::move(comm));
    }
  }
  return Status(MPI_ERR_INTERN, "unknown path");
}

// The rank, size and local memory of a call on an intracommunicator or intercommunicator; false
// when the communicator is invalid (the base MPI then reports it).
bool locate_call(const CollCall& call, Prepared& p, LocalMemory* memory, bool* is_inter) {
  p.call = &call;
  int inter = 0;
  if (PMPI_Comm_rank(call.comm, &p.rank) != MPI_SUCCESS || PMPI_Comm_test_inter(call.comm, &inter) != MPI_SUCCESS) {
    return false;
  }
  PMPI_Comm_size(call.comm, &p.size);
  p.layout = layout_of(call, p.rank, p.size);
  *memory = classify(p.layout);
  p.device = memory->ordinal;
  *is_inter = inter != 0;
  return true;
}

int route_device_aware(const CollCall& call, const BaseCall& base, Mode mode, MPI_Request* request) {
  const auto started = Clock::now();
  Prepared p;
  LocalMemory memory;
  bool is_inter = false;
  if (!locate_call(call, p, &memory, &is_inter)) return call_base(base, call, call.sendbuf, call.recvbuf, request);

  RouteInput in;
  in.kind = call.kind;
  in.device_memory = memory.device;
  in.memory_disagrees = config().verify && memory_disagrees(memory.device, call.comm);
  in.intercomm = is_inter;
  in.comm_size = p.size;
  Status status;
  if (memory.device) {
    status = validate(p);
    if (status.ok()) status = prepare_types(p);
    if (!status.ok()) return fail(call, p.size, status, request);
    ncclDataType_t nccl_type;
    ncclRedOp_t nccl_op;
    in.nccl_reducible = to_nccl_type(call.recvtype, &nccl_type) && to_nccl_op(call.op, &nccl_op);
    in.contiguous = p.send_type.contiguous() && p.recv_type.contiguous();
    in.agreed_bytes = agreed_bytes(p);
    // Only calls that can reach the tuning table pay for the (local, cached) lookup.
    if (p.size > 1 && !is_inter && !in.memory_disagrees && in.agreed_bytes != 0) {
      const tuning::CommFacts facts = comm_facts(call.comm);
      in.topology = facts.topology;
      in.nccl_everywhere = facts.nccl_everywhere;
    }
  } else if (config().stats) {
    prepare_types(p);
    in.agreed_bytes = agreed_bytes(p);
  }
  const Route route = choose_route(in);
  if (memory.device) log_route(p, route, in.agreed_bytes);
  status = run_path(route.path, p, base, mode, request);
  if (config().stats) {
    // Vector forms have no agreed size: count what this rank received (or sent, at a scatter root).
    const std::uint64_t bytes = in.agreed_bytes != tuning::kUnknownSize ? in.agreed_bytes : local_bytes(p);
    stats::record(call.kind, route.path, bytes, std::chrono::duration<double>(Clock::now() - started).count());
  }
  return status.ok() ? MPI_SUCCESS : fail(call, p.size, status, request);
}

// No exception crosses the C ABI: what escapes the routing becomes an MPI error.
template <class Fn>
int guarded(const CollCall& call, MPI_Request* request, Fn&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(call, 0, Status(MPI_ERR_NO_MEM, "out of host memory"), request);
  } catch (...) {
    return fail(call, 0, Status(MPI_ERR_INTERN, "unexpected internal error"), request);
  }
}

}  // namespace

int run_collective(const CollCall& call, const BaseCall& base, Mode mode, MPI_Request* request) {
  // MPICH 4.0.2 does not check for a negative count and overwrites its stack: two compares here
  // turn that into MPI_ERR_COUNT (vector counts are checked only on the device path).
  if (call.sendcount < 0 || call.recvcount < 0) {
    return fail(call, 0, Status(MPI_ERR_COUNT, "negative count"), request);
  }
  if (!device::cuda_available() && !config().stats) return call_base(base, call, call.sendbuf, call.recvbuf, request);
  return guarded(call, request, [&] { return route_device_aware(call, base, mode, request); });
}

namespace {

// The base MPI's own persistent request, registered so that the Wait/Test family can work around
// MPICH 4.0.2's handling of inactive ones (requests_persistent.h).
int init_base_persistent(const BaseCall& init, const CollCall& call, MPI_Request* request) {
  const int rc = call_base(init, call, call.sendbuf, call.recvbuf, request);
  if (rc == MPI_SUCCESS) register_base_persistent(*request);
  return rc;
}

}  // namespace

int run_persistent_init(const CollCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request) {
  if (!device::cuda_available()) return init_base_persistent(init, call, request);
  return guarded(call, request, [&] {
    Prepared p;
    LocalMemory memory;
    bool is_inter = false;
    if (!locate_call(call, p, &memory, &is_inter) || !memory.device) return init_base_persistent(init, call, request);
    Status status = validate(p);
    if (status.ok()) status = create_persistent(call, std::move(nonblocking), request);
    return status.ok() ? MPI_SUCCESS : fail(call, p.size, status, request);
  });
}

}  // namespace mcrp
