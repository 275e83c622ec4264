#include "collectives/route.h"

#include "runtime/base_mpi.h"

namespace mcrp {

const char* path_name(Path path) {
  switch (path) {
    case Path::mpi: return "mpi";
    case Path::staged: return "staged";
    case Path::nccl: return "nccl";
    case Path::local_copy: return "local_copy";
    case Path::direct: return "direct";
  }
  return "?";
}

Path base_mpi_device_path() { return base_mpi_cuda_aware() ? Path::direct : Path::staged; }

namespace {

Route choose_for_base_without_cuda(const RouteInput& in) {
  Route r;
  auto pick = [&r](Path path, const char* reason) {
    r.path = path;
    r.reason = reason;
    return r;
  };
  if (in.memory_disagrees) {
    return pick(in.device_memory ? Path::staged : Path::mpi,
                "ranks disagree on host/device buffers (MCRPMPI_VERIFY): everyone uses the base MPI");
  }
  if (!in.device_memory) return pick(Path::mpi, "host buffers");
  // With nothing to move, the base MPI touches no buffer, and every rank knows the size is zero.
  if (in.agreed_bytes == 0) return pick(Path::mpi, "zero-size message");
  if (in.intercomm) return pick(Path::staged, "intercommunicator");
  if (in.comm_size == 1) {
    // A copy would accept a predefined op on a derived datatype, which the base MPI mostly rejects
    // (not all: Fortran-kind integers reduce with MPI_SUM).
    if (in.predefined_op_on_derived_type) {
      return pick(Path::staged, "one-rank communicator: the base MPI checks the op on a derived datatype");
    }
    return in.contiguous ? pick(Path::local_copy, "one-rank communicator")
                         : pick(Path::staged, "one-rank communicator with a non-contiguous datatype");
  }
  if (in.kind == CollKind::scan || in.kind == CollKind::exscan) return pick(Path::staged, "NCCL has no scan");
  if (in.kind == CollKind::barrier) return pick(Path::mpi, "barrier has no buffers");
  if (is_reduction(in.kind) && !in.nccl_reducible) {
    return pick(Path::staged, "datatype or op has no NCCL equivalent");
  }
  if (!in.nccl_everywhere) return pick(Path::staged, "NCCL is not usable on every rank");
  r.by_table = true;
  r.query = tuning::Query{in.kind, in.agreed_bytes, in.comm_size, in.topology};
  r.decision = tuning::decide(r.query);
  return pick(r.decision.backend == tuning::Backend::nccl ? Path::nccl : Path::staged, tuning::source_name(r.decision.source));
}

}  // namespace

Route choose_route(const RouteInput& in) {
  Route route = choose_for_base_without_cuda(in);
  if (route.path == Path::staged && in.base_takes_device_memory) route.path = Path::direct;
  return route;
}

}  // namespace mcrp
