#include "collectives/block_dispatch.h"

#include <utility>

#include "collectives/block_layout.h"
#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/mpich_handles.h"
#include "runtime/persistent.h"
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

// Staged, blocking or started, once the sides are known to hold device memory.
Status run_on_images(StagedSides sides, const BaseCall& base, Mode mode, MPI_Comm comm, const char* call,
                     MPI_Request* request) {
  const bool copy = !base_mpi_cuda_aware();
  const BuffersOnlyBase on_images(base);
  if (mode == Mode::nonblocking) return start_staged_sides(std::move(sides), on_images, copy, comm, call, request);
  return run_staged_sides(sides, on_images, copy);
}

[[gnu::noinline]] int route(const BlockCall& call, const BaseCall& base, Mode mode, MPI_Request* request) {
  BlockCounts counts;
  if (!block_counts(call, &counts)) return call_base_unchanged(call, base, request);
  StagedSides sides;
  Status status = block_sides(call, counts, &sides);
  if (status.ok()) {
    sides.device = device_of(sides);
    if (sides.device < 0) return call_base_unchanged(call, base, request);
    status = run_on_images(std::move(sides), base, mode, call.comm, nonblocking_mpi_name(call.kind), request);
  }
  return status.ok() ? MPI_SUCCESS : fail(call.comm, mpi_name(call.kind), status, request);
}

}  // namespace

int run_collective(const BlockCall& call, const BaseCall& base, Mode mode, MPI_Request* request) {
  if (host_only_process() || !needs_layout(call)) return call_base_unchanged(call, base, request);
  return guarded([&] { return route(call, base, mode, request); },
                 [&](const Status& status) { return fail(call.comm, mpi_name(call.kind), status, request); });
}

int run_blocking_collective(const BlockCall& call, const BaseCall& base, const BaseCall& nonblocking) {
  if (!config().polling_collectives) return run_collective(call, base);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = run_collective(call, nonblocking, Mode::nonblocking, &request);
  return rc != MPI_SUCCESS ? rc : wait_polling(&request, MPI_STATUS_IGNORE);
}

int run_persistent_init(const BlockCall& call, const BaseCall& init, OwnedBaseCall nonblocking, MPI_Request* request) {
  if (host_only_process()) {
    const int rc = call_base_unchanged(call, init, request);
    if (rc == MPI_SUCCESS) register_base_persistent(*request);
    return rc;
  }
  const auto failed = [&](const Status& status) { return fail(call.comm, mpi_name(call.kind), status, request); };
  return guarded(
      [&] {
        // The arguments are checked now, as the base MPI's own init would; each start looks at the
        // memory again (it may have moved between host and device).
        BlockCounts counts;
        StagedSides sides;
        if (block_counts(call, &counts)) {
          const Status status = block_sides(call, counts, &sides);
          if (!status.ok()) return failed(status);
        }
        PersistentStart start = [call, nonblocking = std::move(nonblocking)](MPI_Request* inner) mutable {
          return run_collective(call, BaseCall(nonblocking), Mode::nonblocking, inner);
        };
        const Status status = create_persistent(std::move(start), request);
        return status.ok() ? MPI_SUCCESS : failed(status);
      },
      failed);
}

}  // namespace mcrp
