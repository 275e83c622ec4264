#include "p2p/dispatch.h"

#include <cstdio>
#include <new>
#include <string>
#include <utility>

#include "device/cuda_runtime.h"
#include "device/ordered_streams.h"
#include "p2p/assertion.h"
#include "p2p/prepared.h"
#include "p2p/profile_rows.h"
#include "p2p/rendezvous.h"
#include "p2p/staged.h"
#include "runtime/base_mpi.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/memory_checks.h"
#include "runtime/mpich_handles.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"
#include "runtime/progress.h"
#include "runtime/wait_family.h"

namespace mcrp {
namespace {

// The device ordinal of the first significant side in device memory, or -1 (host buffers only).
int device_of(const P2PPrepared& p) {
  profile::StepTimer classifying(profile::Step::classify);
  for (const BufferSide* side : {&p.send, &p.recv}) {
    if (!side->significant()) continue;
    const device::PointerInfo info = device::locate(memory_probe_address(*side));
    if (info.kind == device::MemoryKind::device) return info.device;
  }
  return -1;
}

// What the staged path needs to know is sound: counts, datatypes and buffers of the significant
// sides (a null buffer with data would be copied from or to address 0). A call that fails it goes
// to the base MPI as it is, which reports the error without touching the buffers (MPICH checks
// counts, datatypes and null buffers before any data).
bool prepare_types(P2PPrepared& p) {
  profile::StepTimer deciding(profile::Step::decide);
  for (auto [side, type] : {std::pair{&p.send, &p.send_type}, std::pair{&p.recv, &p.recv_type}}) {
    if (!side->significant()) continue;
    if (side->total_count() < 0 || !type_info(side->type, type).ok() || !check_side(*side, *type).ok()) return false;
  }
  return true;
}

Status check_large_counts(const P2PCall& call) {
  const struct {
    bool used;
    const void* buffer;
    MPI_Count count;
    MPI_Datatype type;
  } sides[] = {{call.sends(), call.sendbuf, call.sendcount, call.sendtype},
               {call.receives(), call.recvbuf, call.recvcount, call.recvtype}};
  for (const auto& s : sides) {
    TypeInfo info;
    if (!s.used || s.count < kCheckedCount || !type_info(s.type, &info).ok()) continue;
    BufferSide side;
    side.base = static_cast<char*>(const_cast<void*>(s.buffer));
    side.blocks = {Block{0, s.count}};
    MCRP_TRY(check_side(side, info));
  }
  return {};
}

// A buffer that may hold device data: in device memory, or of a derived datatype, which may reach
// memory away from the pointer (MPI_BOTTOM with absolute addresses; the call's sides tell).
bool may_be_device(const void* buffer, MPI_Datatype type) {
  return !is_builtin_handle(type) || device::locate(buffer).kind == device::MemoryKind::device;
}

}  // namespace

P2PVerdict host_sides(const void* sendbuf, MPI_Datatype sendtype, const void* recvbuf, MPI_Datatype recvtype,
                      bool blocking) {
  if (profile::enabled() || config().verify) return P2PVerdict::routed;
  if (!device::cuda_available()) return P2PVerdict::direct;
  if (engines_exist()) return P2PVerdict::routed;
  if (blocking && background_work_pending()) return P2PVerdict::unknown;
  const bool host = !may_be_device(sendbuf, sendtype) && !may_be_device(recvbuf, recvtype);
  return host ? P2PVerdict::direct : P2PVerdict::routed;
}

namespace {

// Whether the call goes to the base MPI as it is, decided before the call is described (that
// allocates), unless its wrapper already found it routed (host_direct, p2p/dispatch.h). The common
// case, every host program on a GPU machine, costs two memory-kind lookups (device/host_regions.h),
// made by the wrapper.
bool plainly_host(const P2PCall& call, P2PVerdict wrapper) {
  if (host_only_process()) return true;
  if (wrapper == P2PVerdict::routed) return false;
  return host_sides(call, false) == P2PVerdict::direct;
}

// MCRPMPI_VERIFY=1: the memory behind each significant side holds what the call covers (a device
// buffer inside its allocation, a host one mapped; runtime/memory_checks.h). Types prepared.
Status check_memory(const P2PPrepared& p) {
  if (!config().verify) return {};
  for (auto [side, type] : {std::pair{&p.send, &p.send_type}, std::pair{&p.recv, &p.recv_type}}) {
    if (side->significant()) MCRP_TRY(check_buffer_memory(*side, *type, device::locate(memory_probe_address(*side))));
  }
  return {};
}

void log_route(const P2PPrepared& p, const char* path, const char* reason) {
  if (!config().debug) return;
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "mcrpmpi[%d]: %s on device %d -> %s (%s)\n", rank, p.call->entry, p.device, path, reason);
}

int fail(const P2PCall& call, const Status& status, MPI_Request* request) {
  if (request != nullptr) *request = MPI_REQUEST_NULL;
  return raise_error(call.comm, call.entry, 0, status);
}

// No exception crosses the C ABI: what escapes the routing becomes an MPI error.
template <class Fn>
int guarded(const P2PCall& call, MPI_Request* request, Fn&& body) {
  return mcrp::guarded(body, [&](const Status& status) { return fail(call, status, request); });
}

// On a communicator asserted device-only every significant, non-empty side must be device memory
// (an empty one may be anything); sets p.device to the first side's device.
Status check_asserted_sides(P2PPrepared& p) {
  profile::StepTimer classifying(profile::Step::classify);
  for (auto [side, type] : {std::pair{&p.send, &p.send_type}, std::pair{&p.recv, &p.recv_type}}) {
    if (!side->significant()) continue;
    if (side->total_count() < 0) return Status(MPI_ERR_COUNT, "negative count");
    MCRP_TRY(type_info(side->type, type));
    MCRP_TRY(check_side(*side, *type));
    MCRP_TRY(check_committed(side->type, p.call->comm));  // NCCL would not notice
    if (side->total_count() * type->size == 0) continue;
    const device::PointerInfo where = device::locate(memory_probe_address(*side));
    if (where.kind != device::MemoryKind::device) {
      return Status(MPI_ERR_BUFFER, "host buffer on a communicator asserted to carry device memory only "
                                    "(mpi_assert_memory_alloc_kinds=cuda:device or MCRPMPI_P2P_DEVICE_ONLY)");
    }
    if (p.device < 0) p.device = where.device;
  }
  return {};
}

// What the base MPI itself would refuse in an envelope on an (intra)communicator of `size` ranks:
// a rank outside it or a tag outside [0, MPI_TAG_UB] (wildcards where a receive allows them).
bool envelope_acceptable(const P2PCall& call, int size) {
  static const int tag_ub = [] {
    int* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    return found && value != nullptr ? *value : 32767;  // 32767: the least MPI guarantees
  }();
  auto rank_ok = [size](int rank, bool wildcard) {
    return rank == MPI_PROC_NULL || (wildcard && rank == MPI_ANY_SOURCE) || (rank >= 0 && rank < size);
  };
  auto tag_ok = [](int tag, bool wildcard) { return (wildcard && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= tag_ub); };
  if (call.sends() && (!rank_ok(call.dest, false) || !tag_ok(call.sendtag, false))) return false;
  if (call.receives() && call.kind != P2PKind::mrecv && (!rank_ok(call.source, true) || !tag_ok(call.recvtag, true))) {
    return false;
  }
  return true;
}

// A call on a communicator asserted device-only (or an Mrecv of a library message): the protocol
// of p2p/engine.h.
int route_asserted(const std::shared_ptr<Engine>& engine, const P2PCall& user_call, const P2PBaseCall& base, Mode mode,
                   MPI_Request* request, MPI_Status* status) {
  P2PCall call = user_call;
  if (call.kind == P2PKind::mrecv) call.comm = engine->comm();
  // A bad envelope goes to the base MPI as it is: it reports the error in its own words and reads
  // no buffer, and the protocol never numbers a header that cannot be sent (a rank outside the
  // communicator would index past the engine's peers).
  if (!envelope_acceptable(call, engine->size())) return base(call.sendbuf, call.recvbuf, request, status);
  P2PPrepared p;
  describe_sides(call, &p);
  if (!p.send.significant() && !p.recv.significant()) return base(call.sendbuf, call.recvbuf, request, status);
  if (profile::enabled()) charge_profile(call.kind, P2PPath::device_only);
  Status checked = check_asserted_sides(p);
  if (checked.ok()) checked = check_memory(p);
  if (checked.ok()) {
    log_route(p, engine->channel_name(), "communicator asserted device-only");
    checked = run_asserted(engine, p, mode, request, status);
  }
  return checked.ok() ? MPI_SUCCESS : fail(call, checked, request);
}

std::shared_ptr<Engine> asserted_engine(const P2PCall& call) {
  if (call.kind == P2PKind::mrecv) {
    return call.message != nullptr && is_library_message(*call.message) ? engine_of_message(*call.message) : nullptr;
  }
  return engine_of(call.comm);
}

int route(const P2PCall& call, const P2PBaseCall& base, Mode mode, MPI_Request* request, MPI_Status* status) {
  profile::CallTimer timing(mode == Mode::blocking ? profile::Form::blocking : profile::Form::started);
  if (const std::shared_ptr<Engine> engine = asserted_engine(call)) {
    return route_asserted(engine, call, base, mode, request, status);
  }
  P2PPrepared p;
  describe_sides(call, &p);
  p.device = device_of(p);
  auto to_base = [&] {
    if (profile::enabled()) charge_profile(call.kind, P2PPath::mpi);
    return base(call.sendbuf, call.recvbuf, request, status);
  };
  // Host calls go to the base MPI as they are (under MCRPMPI_VERIFY once their memory is checked);
  // so do calls the base MPI must refuse.
  if ((p.device < 0 && !config().verify) || !prepare_types(p)) return to_base();
  Status result = check_memory(p);
  if (!result.ok()) return fail(call, result, request);
  if (p.device < 0) return to_base();
  const bool copy = !base_mpi_cuda_aware();
  if (profile::enabled()) charge_profile(call.kind, copy ? P2PPath::staged : P2PPath::direct);
  log_route(p, copy ? "staged" : "base MPI", copy ? "base MPI is not CUDA-aware" : "base MPI is CUDA-aware");
  if (mode == Mode::blocking) {
    result = run_staged_p2p(p, base, copy, status);
  } else if (!copy && !call.sendrecv()) {
    // A CUDA-aware base MPI gets the device pointers once the application's earlier work is done.
    MpiProgress progress("earlier device work before a CUDA-aware base call");
    result = device::wait_for_legacy_stream(p.device, progress);
    if (result.ok()) return base(call.sendbuf, call.recvbuf, request, status);
  } else {
    result = start_staged_p2p(p, base, copy, request);
  }
  return result.ok() ? MPI_SUCCESS : fail(call, result, request);
}

// Out of line: inlined into run_p2p, the routing gave every host call its stack frame and saved
// registers.
[[gnu::noinline]] int route_guarded(const P2PCall& call, const P2PBaseCall& base, Mode mode, MPI_Request* request,
                                    MPI_Status* status) {
  return guarded(call, request, [&] { return route(call, base, mode, request, status); });
}

}  // namespace

int run_p2p(const P2PCall& call, const P2PBaseCall& base, Mode mode, MPI_Request* request, MPI_Status* status,
            P2PVerdict wrapper) {
  if (has_large_count(call)) {
    const Status checked = check_large_counts(call);
    if (!checked.ok()) return fail(call, checked, request);
  }
  if (plainly_host(call, wrapper)) return base(call.sendbuf, call.recvbuf, request, status);
  return route_guarded(call, base, mode, request, status);
}

int run_blocking_p2p(const P2PCall& call, const P2PBaseCall& base, const P2PBaseCall& nonblocking, MPI_Status* status,
                     P2PVerdict wrapper) {
  // Background work needs CUDA: a host-only process never has any.
  if (host_only_process() || !background_work_pending()) {
    return run_p2p(call, base, Mode::blocking, nullptr, status, wrapper);
  }
  profile::CallTimer timing(profile::Form::blocking);  // the nonblocking call inside is part of it
  // MPICH 4.0.2 completes a nonblocking receive from MPI_PROC_NULL with source 0 and tag 0; the
  // blocking call owes the standard's status (docs/base-mpi-defects.md).
  const bool from_proc_null = call.receives_from_proc_null();  // before the Mrecv resets its handle
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = run_p2p(call, nonblocking, Mode::nonblocking, &request, MPI_STATUS_IGNORE, wrapper);
  profile::StepTimer waiting(profile::Step::wait);
  const int waited = rc != MPI_SUCCESS ? rc : wait_one(&request, status);
  if (waited == MPI_SUCCESS && from_proc_null && status != MPI_STATUS_IGNORE) {
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
  }
  return waited;
}

namespace {

// A probe the base MPI answers. While background work is pending (a rendezvous of an asserted
// communicator waiting for this rank, p2p/engine.h), a polling probe lets it advance, and a blocking
// one must not block inside the base MPI: it polls the nonblocking form, advancing the library in
// between, as blocking point-to-point calls wait (run_blocking_p2p).
int base_probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
               int (*base)(void*), void* context) {
  if (flag != nullptr) {  // MPI_Iprobe, MPI_Improbe
    advance_background_work();
    return base(context);
  }
  while (background_work_pending()) {
    advance_library();
    int found = 0;
    const int rc = message == nullptr ? PMPI_Iprobe(source, tag, comm, &found, status)
                                      : PMPI_Improbe(source, tag, comm, &found, message, status);
    if (rc != MPI_SUCCESS || found) return rc;
  }
  return base(context);
}

}  // namespace

int run_probe(const char* entry, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
              MPI_Status* status, int (*base)(void*), void* context) {
  if (!device::cuda_available()) return base(context);
  const std::shared_ptr<Engine> engine = engine_of(comm);
  // MPI_PROC_NULL matches no message, the library's included: the base MPI answers at once (status
  // of MPI_PROC_NULL, MPI_MESSAGE_NO_PROC), where the engine would read its reply as a message.
  if (!engine || source == MPI_PROC_NULL) return base_probe(source, tag, comm, flag, message, status, base, context);
  P2PCall call;
  call.comm = comm;
  call.entry = entry;
  return guarded(call, nullptr, [&] {
    const Status result = probe_asserted(engine, source, tag, flag, message, status);
    return result.ok() ? MPI_SUCCESS : fail(call, result, nullptr);
  });
}

int run_p2p_persistent_init(const P2PCall& call, const P2PBaseCall& init, OwnedP2PBaseCall nonblocking,
                            MPI_Request* request) {
  const Status checked = check_large_counts(call);
  if (!checked.ok()) return fail(call, checked, request);
  if (!device::cuda_available()) return init(call.sendbuf, call.recvbuf, request, MPI_STATUS_IGNORE);
  return guarded(call, request, [&] {
    P2PPrepared p;
    describe_sides(call, &p);
    if (engine_of(call.comm)) {
      // Asserted: a host side is refused now rather than at every start.
      const Status checked = check_asserted_sides(p);
      if (!checked.ok()) return fail(call, checked, request);
    } else if (device_of(p) < 0 || !prepare_types(p)) {
      return init(call.sendbuf, call.recvbuf, request, MPI_STATUS_IGNORE);
    }
    // Each MPI_Start routes the call again, as its nonblocking form.
    PersistentStart start = [call, nonblocking = std::move(nonblocking)](MPI_Request* inner) mutable {
      return run_p2p(call, P2PBaseCall(nonblocking), Mode::nonblocking, inner, MPI_STATUS_IGNORE);
    };
    HandleHolds holds = HandleHolds::of(call.comm, {call.sendtype, call.recvtype});
    const Status status = create_persistent(std::move(start), std::move(holds), request, FreeActive::detach);
    return status.ok() ? MPI_SUCCESS : fail(call, status, request);
  });
}

}  // namespace mcrp
