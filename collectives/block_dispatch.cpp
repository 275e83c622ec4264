#include "collectives/block_dispatch.h"

#include <memory>
#include <utility>

#include "collectives/agreement.h"
#include "collectives/block_layout.h"
#include "collectives/stats.h"
#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/memory_checks.h"
#include "runtime/mpich_handles.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"
#include "runtime/staged_sides.h"
#include "runtime/wait_family.h"

namespace mcrp {
namespace {

int call_base_unchanged(const BlockCall& call, const BaseCall& base, MPI_Request* request) {
  return base(call.sendbuf, call.recvbuf, request, MPI_DATATYPE_NULL, MPI_OP_NULL);
}

int fail(MPI_Comm comm, const char* call, const Status& status, MPI_Request* request) {
  if (request != nullptr) *request = MPI_REQUEST_NULL;
  return raise_error(comm, call, 0, status);
}

bool on_device(const void* pointer) {
  return pointer != MPI_IN_PLACE && device::locate(pointer).kind == device::MemoryKind::device;
}

// Whether the call may have device memory or input the library checks: the per-block-type forms
// (any block's datatype may reach elsewhere), derived datatypes, MPI_IN_PLACE, or a buffer argument
// in device memory. Otherwise both sides lie where the arguments point, in host memory, and the
// call goes to the base MPI after two memory-kind lookups.
bool needs_layout(const BlockCall& c) {
  auto derived = [](MPI_Datatype type) { return !is_builtin_handle(type); };
  return c.per_block_types() || derived(c.sendtype) || derived(c.recvtype) || c.sendbuf == MPI_IN_PLACE ||
         c.recvbuf == MPI_IN_PLACE || on_device(c.sendbuf) || on_device(c.recvbuf);
}

// Whether the base MPI checks every argument the library checks, so that a call on host buffers may
// go to it untouched. Debian's MPICH 4.0.2 crashes instead of reporting MPI_IN_PLACE in a
// neighborhood collective, and NULL counts, displacements or datatypes arrays of the vector and w
// forms (test_block_collectives --bad-input without the library; docs/base-mpi-defects.md); such
// calls are described first, on host buffers too, which refuses them or finds them valid (NULL
// arrays of a rank without neighbors, MPI_Alltoallw's MPI_IN_PLACE). Pointer tests only.
bool base_checks_everything(const BlockCall& c) {
  if (c.sendbuf == MPI_IN_PLACE || c.recvbuf == MPI_IN_PLACE) return false;
  const bool typed_arrays = !c.per_block_types() || (c.sendtypes != nullptr && c.recvtypes != nullptr);
  switch (c.kind) {
    case BlockKind::neighbor_allgather:
    case BlockKind::neighbor_alltoall: return true;
    case BlockKind::neighbor_allgatherv: return c.recvcounts.present() && c.rdispls.present();
    default:
      return typed_arrays && c.sendcounts.present() && c.sdispls.present() && c.recvcounts.present() &&
             c.rdispls.present();
  }
}

// The checks of the significant arguments alone (block_layout.h). An invalid communicator, or one
// without a topology, passes: the base MPI reports it.
Status check_arguments(const BlockCall& call) {
  BlockCounts counts;
  StagedSides sides;
  if (!block_counts(call, &counts)) return {};
  return block_sides(call, counts, &sides);
}

// Staged, blocking or started, once the sides are known to hold device memory.
Status run_on_images(StagedSides sides, const BaseCall& base, Mode mode, MPI_Comm comm, const char* call, bool copy,
                     MPI_Request* request) {
  const BuffersOnlyBase on_images(base);
  if (mode == Mode::nonblocking) return start_staged_sides(std::move(sides), on_images, copy, comm, call, request);
  return run_staged_sides(sides, on_images, copy);
}

// MCRPMPI_STATS and MCRPMPI_PROFILE count host calls too, and MCRPMPI_VERIFY checks them: those are
// described as well.
bool watched() {
  const Config& settings = config();
  return settings.stats || settings.verify || profile::enabled();
}

// MCRPMPI_VERIFY: the memory behind each side holds what the call reaches (runtime/memory_checks.h),
// and the ranks agree on the outcome of every check, so that a rank whose arguments fail does not
// leave the others waiting in the base MPI's collective.
Status verified(const StagedSides& sides, MPI_Comm comm, Status local) {
  if (local.ok()) local = check_buffer_memory(sides);
  return agree_on_checks(comm, local);
}

[[gnu::noinline]] int route(const BlockCall& call, const BaseCall& base, Mode mode, MPI_Request* request) {
  profile::CallTimer timing(mode == Mode::blocking ? profile::Form::blocking : profile::Form::started);
  const bool counting = config().stats;
  const auto started = counting ? stats::Clock::now() : stats::Clock::time_point{};  // a clock read only when used
  profile::StepTimer classifying(profile::Step::classify);
  BlockCounts counts;
  if (!block_counts(call, &counts)) return call_base_unchanged(call, base, request);  // the base MPI reports it
  StagedSides sides;
  MPI_Count received = 0;
  Status status = block_sides(call, counts, &sides, &received);
  if (config().verify) status = verified(sides, call.comm, status);
  if (!status.ok()) return fail(call.comm, mpi_name(call.kind), status, request);
  sides.device = device_of(sides);
  classifying.stop();
  const Path path = sides.device < 0 ? Path::mpi : base_mpi_device_path();
  if (profile::enabled()) stats::charge_profile(call.kind, path);
  int rc = MPI_SUCCESS;
  if (path == Path::mpi) {
    rc = call_base_unchanged(call, base, request);
  } else {
    status = run_on_images(std::move(sides), base, mode, call.comm, nonblocking_mpi_name(call.kind),
                           path == Path::staged, request);
    if (!status.ok()) rc = fail(call.comm, mpi_name(call.kind), status, request);
  }
  // Bytes: what this rank's receive blocks hold, as the routed vector forms count.
  if (counting) stats::record(call.kind, path, static_cast<std::uint64_t>(received), stats::seconds_since(started));
  return rc;
}

}  // namespace

int run_collective(const BlockCall& call, const BaseCall& base, Mode mode, MPI_Request* request, const HostDirect&) {
  if (base_checks_everything(call) && (host_only_process() || (!needs_layout(call) && !watched()))) {
    return call_base_unchanged(call, base, request);
  }
  return guarded([&] { return route(call, base, mode, request); },
                 [&](const Status& status) { return fail(call.comm, mpi_name(call.kind), status, request); });
}

int run_blocking_collective(const BlockCall& call, const BaseCall& base, const BaseCall& nonblocking, const HostDirect&) {
  if (!config().polling_collectives) return run_collective(call, base);
  profile::CallTimer timing(profile::Form::blocking);  // the nonblocking call inside is part of it
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = run_collective(call, nonblocking, Mode::nonblocking, &request);
  profile::StepTimer waiting(profile::Step::wait);
  return rc != MPI_SUCCESS ? rc : wait_polling(&request, MPI_STATUS_IGNORE);
}

int run_persistent_init(const BlockCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request) {
  const auto failed = [&](const Status& status) { return fail(call.comm, mpi_name(call.kind), status, request); };
  return guarded(
      [&] {
        // The arguments are checked now, as the base MPI's own init would (and where MPICH 4.0.2
        // accepts what it then crashes on at the start); each start looks at the memory again (it
        // may have moved between host and device).
        Status checked = check_arguments(call);
        if (config().verify) checked = agree_on_checks(call.comm, checked);  // *_init is collective too
        if (!checked.ok()) return failed(checked);
        if (host_only_process()) {
          const int rc = call_base_unchanged(call, init, request);
          if (rc == MPI_SUCCESS) register_base_persistent(*request, call.comm);
          return rc;
        }
        // Each start reads copies of the arrays (the caller's may be gone by then); an invalid
        // communicator keeps none and is the base MPI's to report at the start.
        BlockCounts counts;
        auto kept = std::make_shared<KeptCall<BlockCall>>();
        kept->call = block_counts(call, &counts) ? keep_arrays(call, counts, &kept->copies) : call;
        PersistentStart start = [kept, nonblocking = std::move(nonblocking)](MPI_Request* inner) {
          const BlockCall& c = kept->call;
          BaseWithArrays base(nonblocking,
                              BaseArrays{c.sendcounts, c.sdispls, c.recvcounts, c.rdispls, c.sendtypes, c.recvtypes});
          return run_collective(c, BaseCall(base), Mode::nonblocking, inner);
        };
        HandleHolds holds = HandleHolds::of(call.comm, {call.sendtype, call.recvtype});
        for (const MPI_Datatype type : kept->copies.datatypes()) holds.hold_datatype(type);
        const Status status = create_persistent(std::move(start), std::move(holds), request);
        return status.ok() ? MPI_SUCCESS : failed(status);
      },
      failed);
}

}  // namespace mcrp
