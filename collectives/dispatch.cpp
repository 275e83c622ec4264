#include "collectives/dispatch.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <new>
#include <utility>

#include "collectives/agreement.h"
#include "collectives/host_direct.h"
#include "collectives/nccl_types.h"
#include "collectives/route.h"
#include "collectives/stats.h"
#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/comm_facts.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/memory_checks.h"
#include "runtime/mpich_handles.h"
#include "runtime/nccl_comm.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/requests.h"
#include "runtime/wait_family.h"

namespace mcrp {
namespace {

using stats::Clock;

struct LocalMemory {
  bool device = false;
  int ordinal = -1;
};

// Where each significant side's data starts (kept in the Prepared for the device views), and so
// whether the call has device memory and on which device.
LocalMemory classify(Prepared& p, const ArgumentMemory& arguments) {
  LocalMemory memory;
  for (auto [side, info] : {std::pair{&p.layout.send, &p.send_memory}, std::pair{&p.layout.recv, &p.recv_memory}}) {
    if (!side->significant()) continue;
    *info = arguments.of(memory_probe_address(*side), *p.call);
    if (info->kind == device::MemoryKind::device && !memory.device) {
      memory.device = true;
      memory.ordinal = info->device;
    }
  }
  return memory;
}

std::uint64_t local_bytes(const Prepared& p) {
  const bool receives = p.layout.recv.significant();
  const BufferSide& side = receives ? p.layout.recv : p.layout.send;
  const MPI_Count element = receives ? p.recv_type.size : p.send_type.size;
  return static_cast<std::uint64_t>(side.total_count() * element);
}

Status prepare_types(Prepared& p) {
  Status status;
  if (p.layout.send.significant()) status = type_info(p.layout.send.type, &p.send_type);
  if (status.ok() && p.layout.recv.significant()) status = type_info(p.layout.recv.type, &p.recv_type);
  // The base MPI checks a predefined op against the datatype first: for it an invalid datatype in
  // a reduction is an operation the op does not define (MPI_ERR_OP).
  if (!status.ok() && is_reduction(p.call->kind) && is_builtin_handle(p.call->op)) {
    return Status(MPI_ERR_OP, "the operation is not defined for an invalid datatype");
  }
  return status;
}

// The significant sides' geometry: counts whose byte offsets overflow, null buffers with data.
Status check_sides(const Prepared& p) {
  if (p.layout.send.significant()) MCRP_TRY(check_side(p.layout.send, p.send_type));
  if (p.layout.recv.significant()) MCRP_TRY(check_side(p.layout.recv, p.recv_type));
  return {};
}

bool has_checked_count(const Layout& layout) {
  for (const BufferSide* side : {&layout.send, &layout.recv}) {
    for (const Block& b : side->blocks) {
      if (b.count >= kCheckedCount) return true;
    }
  }
  return false;
}

// What the library rejects itself, from significant arguments only (collectives/layout.h), before
// a call reaches a path. Host-buffer calls are the base MPI's to check, except for what MPICH 4.0.2
// does not check and crashes or aborts on (docs/base-mpi-defects.md): negative counts, NULL
// counts arrays, MPI_IN_PLACE where MPI forbids it, counts whose bytes overflow (large counts only:
// that check needs datatype queries; an invalid datatype there stays the base MPI's to report); and
// MPI_DATATYPE_NULL in a reduction, which MPICH 5.0.2 aborts on.
// Device buffers are checked fully before their pointers reach NCCL or staging.
Status validate(Prepared& p, bool device) {
  const CollCall& c = *p.call;
  MCRP_TRY(check_counts(p.layout));
  MCRP_TRY(check_in_place(p.layout));
  if (!device) {
    // MPICH 5.0.2 aborts on a reduction's MPI_DATATYPE_NULL (docs/base-mpi-defects.md): refused with
    // the class MPICH 4.0.2 and Intel MPI give it (prepare_types), where the datatype is significant.
    const bool null_reduction_type = is_reduction(c.kind) && c.recvtype == MPI_DATATYPE_NULL &&
                                     (p.layout.send.significant() || p.layout.recv.significant());
    if (null_reduction_type) return prepare_types(p);
    if (!has_checked_count(p.layout) || !prepare_types(p).ok()) return {};
    return check_sides(p);
  }
  MCRP_TRY(check_root(c, p.self));
  if (is_reduction(c.kind) && c.op == MPI_OP_NULL) return Status(MPI_ERR_OP, "MPI_OP_NULL");
  MCRP_TRY(prepare_types(p));
  MCRP_TRY(check_sides(p));
  // The base MPI refuses uncommitted datatypes; a device copy or NCCL would not notice. A predefined
  // op on a derived datatype it refuses first, with MPI_ERR_OP: those are staged for it to say so.
  if (is_reduction(c.kind) && is_builtin_handle(c.op)) return {};
  if (p.layout.send.significant()) MCRP_TRY(check_committed(p.layout.send.type, c.comm));
  if (p.layout.recv.significant()) MCRP_TRY(check_committed(p.layout.recv.type, c.comm));
  return {};
}

std::uint64_t agreed_or_unknown(const Prepared& p) {
  return agreed_bytes(*p.call, p.layout, p.self, p.send_type, p.recv_type).value_or(tuning::kUnknownSize);
}

void log_route(const Prepared& p, const Route& route, std::uint64_t bytes) {
  if (!config().debug) return;
  char rule[256] = "";
  if (route.by_table) tuning::describe_decision(route.query, route.decision, rule, sizeof rule);
  std::fprintf(stderr, "mcrpmpi[%d/%d]: %s bytes=%s -> %s (%s%s%s)\n", p.self.rank, p.self.size, mpi_name(p.call->kind),
               bytes == tuning::kUnknownSize ? "per-rank" : std::to_string(bytes).c_str(), path_name(route.path),
               route.reason, route.by_table ? ": " : "", rule);
}

// validate, and under MCRPMPI_VERIFY the memory behind each buffer (runtime/memory_checks.h) and
// the ranks' agreement (collectives/agreement.h), which need the datatypes of host calls too.
Status checked(Prepared& p, bool device, bool* memory_disagrees) {
  Status status = validate(p, device);
  if (status.ok() && !device && (config().stats || config().verify)) status = prepare_types(p);
  if (!config().verify) return status;
  if (status.ok()) status = check_buffer_memory(p.layout.send, p.send_type, p.send_memory);
  if (status.ok()) status = check_buffer_memory(p.layout.recv, p.recv_type, p.recv_memory);
  const Agreement agreement = agree(p, device, status);
  *memory_disagrees = agreement.memory_disagrees;
  return agreement.outcome;
}

// A failed call leaves no request behind.
int fail(const CollCall& call, int size, const Status& status, MPI_Request* request) {
  if (request != nullptr) *request = MPI_REQUEST_NULL;
  return raise_error(call.comm, mpi_name(call.kind), size, status);
}

// Runs the chosen path. Nonblocking mode starts it instead, leaving *request to complete it; a path
// with nothing to wait for (a one-rank copy) runs now and gets an already completed request.
Status run_path(Path path, const Prepared& p, const BaseCall& base, Mode mode, MPI_Request* request) {
  const bool nonblocking = mode == Mode::nonblocking;
  switch (path) {
    case Path::mpi: {
      const int rc = call_base(base, *p.call, p.call->sendbuf, p.call->recvbuf, request);
      return from_base(rc);
    }
    case Path::staged:
    case Path::direct: {
      const bool copy = path == Path::staged;
      return nonblocking ? start_staged(p, base, copy, request) : run_staged(p, base, copy);
    }
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

// Where this rank stands in the call and what memory its significant buffers are; false when the
// communicator is invalid (the base MPI then reports it).
bool locate_call(const CollCall& call, const ArgumentMemory& arguments, Prepared& p, LocalMemory* memory) {
  profile::StepTimer classifying(profile::Step::classify);
  p.call = &call;
  if (!participant_of(call.comm, &p.self)) return false;
  p.layout = layout_of(call, p.self);
  *memory = classify(p, arguments);
  p.device = memory->ordinal;
  return true;
}

int route_device_aware(const CollCall& call, const ArgumentMemory& arguments, const BaseCall& base, Mode mode,
                       MPI_Request* request) {
  profile::CallTimer timing(mode == Mode::blocking ? profile::Form::blocking : profile::Form::started);
  const auto started = config().stats ? Clock::now() : Clock::time_point{};  // a clock read only when used
  Prepared p;
  LocalMemory memory;
  if (!locate_call(call, arguments, p, &memory)) return call_base(base, call, call.sendbuf, call.recvbuf, request);
  profile::StepTimer deciding(profile::Step::decide);
  const int size = p.self.size;

  RouteInput in;
  in.kind = call.kind;
  in.device_memory = memory.device;
  in.intercomm = p.self.inter;
  in.comm_size = size;
  Status status = checked(p, memory.device, &in.memory_disagrees);
  if (!status.ok()) return fail(call, size, status, request);
  if (memory.device) {
    ncclDataType_t nccl_type;
    ncclRedOp_t nccl_op;
    in.nccl_reducible = to_nccl_reduction(call.recvtype, call.op, &nccl_type, &nccl_op);
    in.predefined_op_on_derived_type =
        is_reduction(call.kind) && is_builtin_handle(call.op) && !is_builtin_handle(call.recvtype);
    in.contiguous = p.send_type.contiguous() && p.recv_type.contiguous();
    in.base_takes_device_memory = base_mpi_cuda_aware();
    in.agreed_bytes = agreed_or_unknown(p);
    // Only calls that can reach the tuning table pay for the (local, cached) lookup.
    if (size > 1 && !p.self.inter && !in.memory_disagrees && in.agreed_bytes != 0) {
      const tuning::CommFacts facts = comm_facts(call.comm);
      in.topology = facts.topology;
      in.nccl_everywhere = facts.nccl_everywhere;
    }
  } else if (config().stats) {
    in.agreed_bytes = agreed_or_unknown(p);
  }
  const Route route = choose_route(in);
  if (memory.device) log_route(p, route, in.agreed_bytes);
  deciding.stop();
  if (profile::enabled()) stats::charge_profile(call.kind, route.path);
  status = run_path(route.path, p, base, mode, request);
  if (config().stats) {
    // Vector forms have no agreed size: count what this rank received (or sent, at a scatter root).
    const std::uint64_t bytes = in.agreed_bytes != tuning::kUnknownSize ? in.agreed_bytes : local_bytes(p);
    stats::record(call.kind, route.path, bytes, stats::seconds_since(started));
  }
  return status.ok() ? MPI_SUCCESS : fail(call, size, status, request);
}

// No exception crosses the C ABI: what escapes the routing becomes an MPI error.
template <class Fn>
int guarded(const CollCall& call, MPI_Request* request, Fn&& body) {
  return mcrp::guarded(body, [&](const Status& status) { return fail(call, 0, status, request); });
}

// The checks of pass_through and the routing of run_collective are out of line: inlined, they
// gave every host call their stack frames and saved registers.
[[gnu::noinline]] int pass_through_checked(const CollCall& call, const BaseCall& base, MPI_Request* request) {
  return guarded(call, request, [&] {
    Prepared p;
    LocalMemory memory;
    if (locate_call(call, ArgumentMemory{}, p, &memory)) {
      const Status status = validate(p, false);
      if (!status.ok()) return fail(call, p.self.size, status, request);
    }
    return call_base(base, call, call.sendbuf, call.recvbuf, request);
  });
}

int pass_through(const CollCall& call, const BaseCall& base, MPI_Request* request) {
  if (!needs_host_checks(call)) return call_base(base, call, call.sendbuf, call.recvbuf, request);
  return pass_through_checked(call, base, request);
}

[[gnu::noinline]] int route_guarded(const CollCall& call, const ArgumentMemory& arguments, const BaseCall& base,
                                    Mode mode, MPI_Request* request) {
  return guarded(call, request, [&] { return route_device_aware(call, arguments, base, mode, request); });
}

}  // namespace

ArgumentMemory locate_arguments(const void* sendbuf, const void* recvbuf) {
  auto where = [](const void* pointer) {
    return pointer == MPI_IN_PLACE ? device::PointerInfo{} : device::locate(pointer);
  };
  return ArgumentMemory{where(sendbuf), where(recvbuf)};
}

int run_collective(const CollCall& call, const BaseCall& base, Mode mode, MPI_Request* request,
                   const HostDirect& wrapper) {
  // A host-only process needs neither the settings nor the memory kinds (runtime/host_only.h).
  const bool host_only = host_only_process();
  const ArgumentMemory arguments = host_only          ? ArgumentMemory{}
                                   : wrapper.located ? wrapper.memory
                                                     : locate_arguments(call.sendbuf, call.recvbuf);
  // Statistics and the profile count host calls too, and verification must take part in every
  // collective.
  const auto watched = [] {
    const Config& settings = config();
    return settings.stats || settings.verify || settings.profile;
  };
  if (host_only || (!arguments.any_device() && !watched() && !data_may_lie_elsewhere(call))) {
    return pass_through(call, base, request);
  }
  return route_guarded(call, arguments, base, mode, request);
}

int run_blocking_collective(const CollCall& call, const BaseCall& base, const BaseCall& nonblocking,
                            const HostDirect& wrapper) {
  if (!config().polling_collectives) return run_collective(call, base, Mode::blocking, nullptr, wrapper);
  profile::CallTimer timing(profile::Form::blocking);  // the nonblocking call inside is part of it
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = run_collective(call, nonblocking, Mode::nonblocking, &request, wrapper);
  profile::StepTimer waiting(profile::Step::wait);
  return rc != MPI_SUCCESS ? rc : wait_polling(&request, MPI_STATUS_IGNORE);
}

namespace {

// The base MPI's own persistent request, registered so that the Wait/Test family can work around
// MPICH 4.0.2's handling of inactive ones (requests_persistent.h).
int init_base_persistent(const BaseCall& init, const CollCall& call, MPI_Request* request) {
  const int rc = call_base_init(init, call, request);
  if (rc == MPI_SUCCESS) register_base_persistent(*request, call.comm);
  return rc;
}

// MPICH 4.0.2 and Intel MPI 2021 get three persistent collectives wrong on any memory (docs/base-mpi-defects.md
// "Base-MPI defects"): MPI_Gather_init leaves out the root's own block, MPI_Allgather_init and
// MPI_Scatter_init deliver nothing from the second start, and MPI_Scatter_init on 3 or more ranks
// aborts in MPI_Wait. Their nonblocking forms are right, so the library owns these requests on host
// buffers too and starts the nonblocking form each time. Decided by the collective alone, the same
// on every rank (rule 1), and on every base MPI: no probe could tell a right one without
// communicating, and MPICH 5 (right) loses only its persistent schedule reuse. The same for bcast
// on an intercommunicator, whose nonblocking form the library replaces on every base MPI
// (collectives/intercomm_bcast.h): the base's persistent one there delivers nothing or hangs. And
// the in-place reduce_scatter, whose large uneven blocks MPICH 4.0.2 aborts in (every form; the
// library's nonblocking form is not affected, collectives/base_call.cpp): MPI requires
// MPI_IN_PLACE of every rank there, so this too is decided alike everywhere.
bool base_persistent_unreliable(const CollCall& call, bool intercomm) {
  switch (call.kind) {
    case CollKind::gather:
    case CollKind::allgather:
    case CollKind::scatter: return true;
    case CollKind::bcast: return intercomm;
    case CollKind::reduce_scatter: return call.in_place() && !intercomm;
    default: return false;
  }
}

}  // namespace

int run_persistent_init(const CollCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request) {
  return guarded(call, request, [&] {
    Prepared p;
    LocalMemory memory;
    const ArgumentMemory arguments = locate_arguments(call.sendbuf, call.recvbuf);
    if (!locate_call(call, arguments, p, &memory)) return init_base_persistent(init, call, request);
    // Persistent initialisation is collective: under MCRPMPI_VERIFY the ranks agree here, for host
    // requests too (their starts go to the base MPI unchecked). Where ranks disagree on memory
    // kinds, every rank makes the library's request, whose starts agree again and all take the
    // base MPI's nonblocking form (a base persistent request would match none of them).
    bool memory_disagrees = false;
    Status status = checked(p, memory.device, &memory_disagrees);
    const bool library_request =
        memory.device || memory_disagrees || base_persistent_unreliable(call, p.self.inter);
    if (status.ok() && library_request) {
      // Each MPI_Start runs the call through the router again, as its nonblocking form, on copies
      // of the arrays the call reads (the caller's may be gone by then).
      auto kept = std::make_shared<KeptCall<CollCall>>();
      kept->call = keep_arrays(call, p.self, &kept->copies);
      PersistentStart start = [kept, nonblocking = std::move(nonblocking)](MPI_Request* inner) {
        const CollCall& c = kept->call;
        BaseWithArrays base(nonblocking, BaseArrays{c.sendcounts, c.sdispls, c.recvcounts, c.rdispls});
        return run_collective(c, BaseCall(base), Mode::nonblocking, inner);
      };
      // What every start passes to the base MPI again.
      const CollCall& c = kept->call;
      status = create_persistent(std::move(start), HandleHolds::of(c.comm, {c.sendtype, c.recvtype}, c.op), request);
    }
    if (!status.ok()) return fail(call, p.self.size, status, request);
    return library_request ? MPI_SUCCESS : init_base_persistent(init, call, request);
  });
}

}  // namespace mcrp
