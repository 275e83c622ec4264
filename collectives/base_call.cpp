// Every call into the base MPI's collectives goes through call_base, which is therefore where the
// base MPI's known defects are avoided (docs/base-mpi-defects.md).
#include "collectives/base_call.h"

#include <memory>
#include <vector>

#include "collectives/half_reduction.h"
#include "collectives/kind.h"
#include "runtime/base_request_op.h"
#include "runtime/buffer.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/requests.h"
#include "runtime/self_comm.h"

namespace mcrp {
namespace {

// MPICH 4.0.2 crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 once the message is
// over about 2 KiB (it dereferences MPI_IN_PLACE). MPI_IN_PLACE is the root's own choice, so the
// root may instead pass a copy of its contribution as sendbuf; the other ranks are unaffected.
bool reduce_in_place_off_root_zero(const CollCall& call, const void* sendbuf) {
  return call.kind == CollKind::reduce && sendbuf == MPI_IN_PLACE && call.root != 0 && call.recvcount > 0;
}

// MPICH 4.0.2 fails an internal assertion ("memcpy argument memory ranges overlap", then aborts) in
// MPI_Reduce_scatter with MPI_IN_PLACE and uneven counts once blocks are large (2 ranks, 65539
// floats), and so do MPI_Ireduce_scatter and MPI_Reduce_scatter_init (2 and 3 ranks, 65539 ints
// and one more per rank); the first two are avoided here. The same reduction with a copy of the
// contribution as sendbuf is unaffected. Returns the elements of that contribution, or 0 when the
// call is not such a reduce_scatter.
MPI_Count in_place_reduce_scatter_elements(const CollCall& call, const void* sendbuf) {
  if (call.kind != CollKind::reduce_scatter || sendbuf != MPI_IN_PLACE) return 0;
  int size = 0;
  PMPI_Comm_size(call.comm, &size);
  MPI_Count total = 0;
  for (int i = 0; i < size; ++i) total += call.recvcounts[i];
  return total;
}

// MPICH 4.0.2 ignores displs[0] of MPI_Allgatherv and MPI_Iallgatherv (int and _c forms, not in
// place) on a one-rank intracommunicator: the block lands at the start of recvbuf. Its persistent
// form is right. Asked once, of the library's own one-rank communicator (no communication), so a
// base MPI without the defect is left alone.
bool one_rank_allgatherv_ignores_displacement() {
  static const bool ignores = [] {
    const MPI_Comm self = library_self_comm();
    if (self == MPI_COMM_NULL) return false;
    const int mine = 5, count = 1, displacement = 1;
    int gathered[2] = {-1, -1};
    PMPI_Allgatherv(&mine, 1, MPI_INT, gathered, &count, &displacement, MPI_INT, self);
    return gathered[1] != mine;
  }();
  return ignores;
}

// The receive buffer to hand the base MPI for `call`: recvbuf, or where the block belongs when the
// base MPI would ignore its displacement.
void* allgatherv_target(const CollCall& call, const void* sendbuf, void* recvbuf) {
  if (!allgatherv_displaced(call, sendbuf)) return recvbuf;
  int size = 0, inter = 0;
  if (PMPI_Comm_size(call.comm, &size) != MPI_SUCCESS || size != 1) return recvbuf;
  if (PMPI_Comm_test_inter(call.comm, &inter) != MPI_SUCCESS || inter != 0) return recvbuf;
  if (!one_rank_allgatherv_ignores_displacement()) return recvbuf;
  MPI_Count lb = 0, extent = 0;
  if (PMPI_Type_get_extent_x(call.recvtype, &lb, &extent) != MPI_SUCCESS) return recvbuf;
  return static_cast<char*>(recvbuf) + call.rdispls[0] * extent;
}

// A host copy of the `count` elements at `buffer`, positioned so that the returned pointer plays
// the role of `buffer` for the same datatype.
const void* copy_of(const void* buffer, MPI_Count count, MPI_Datatype type, std::vector<char>& storage) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_get_extent_x(type, &lb, &extent);
  PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  const MPI_Count span = (count - 1) * extent + true_extent;
  storage.assign(static_cast<const char*>(buffer) + true_lb, static_cast<const char*>(buffer) + true_lb + span);
  return span_base(storage.data(), static_cast<std::ptrdiff_t>(true_lb));
}

// A nonblocking in-place reduce_scatter run on a copy of the contribution, which the base MPI may
// read until the call completes: the copy is owned by the request.
class CopiedContribution final : public BaseRequestOp {
 public:
  int start(const BaseCall& base, const CollCall& call, MPI_Count elements, void* recvbuf, MPI_Datatype type,
            MPI_Op op) {
    const void* sendbuf = copy_of(recvbuf, elements, call.recvtype, contribution_);
    return base(sendbuf, recvbuf, &inner_, type, op);
  }

 private:
  std::vector<char> contribution_;
};

int start_copied_reduce_scatter(const BaseCall& base, const CollCall& call, MPI_Count elements, void* recvbuf,
                                MPI_Datatype type, MPI_Op op, MPI_Request* request) {
  const char* name = nonblocking_mpi_name(call.kind);
  auto fail = [&](const Status& status) {
    *request = MPI_REQUEST_NULL;
    int size = 0;
    PMPI_Comm_size(call.comm, &size);
    return raise_error(call.comm, name, size, status);  // the base MPI's own error: as it raised it
  };
  return guarded(
      [&] {
        auto copied = std::make_unique<CopiedContribution>();
        Status status = from_base(copied->start(base, call, elements, recvbuf, type, op));
        if (status.ok()) status = start_generalized(std::move(copied), call.comm, name, {type}, request);
        return status.ok() ? MPI_SUCCESS : fail(status);
      },
      fail);
}

// Valid arguments in place of those MPI leaves insignificant on the root's side of an
// intercommunicator reduce (root_side_of_intercomm_reduce): a send buffer at MPI_ROOT when the
// caller passed NULL, and on MPI_PROC_NULL ranks both buffers, the datatype and the op. The base
// MPI neither reads nor writes the stand-in buffers there.
void stand_in_on_root_side(const CollCall& call, const void** sendbuf, void** recvbuf, MPI_Datatype* type, MPI_Op* op) {
  static const int unread = 0;
  static int unwritten = 0;
  if (*sendbuf == nullptr || call.root == MPI_PROC_NULL) *sendbuf = &unread;
  if (call.root != MPI_PROC_NULL) return;
  *recvbuf = &unwritten;
  *type = MPI_INT;
  *op = MPI_SUM;
}

// The calls base_call_may_adjust picks, out of line: the common call_base only forwards.
[[gnu::noinline]] int call_base_adjusted(const BaseCall& base, const CollCall& call, const void* sendbuf,
                                         void* recvbuf, MPI_Request* request) {
  MPI_Datatype type = call.recvtype;  // the one datatype of reductions and bcast (describe::one_type)
  MPI_Op op = call.op;
  half_substitute(call.kind, call.recvtype, call.op, &type, &op);
  if (root_side_of_intercomm_reduce(call)) stand_in_on_root_side(call, &sendbuf, &recvbuf, &type, &op);
  recvbuf = allgatherv_target(call, sendbuf, recvbuf);
  // A nonblocking bcast here is an fp16 one or one on an intercommunicator (base_call_may_adjust);
  // start_intercomm_bcast tells which itself, so the communicator is not asked twice.
  int started = MPI_SUCCESS;
  if (call.kind == CollKind::bcast && request != nullptr &&
      start_intercomm_bcast(call, recvbuf, type, request, &started)) {
    return started;
  }
  // The defects avoided below concern in-place calls only; the rest pass as they are.
  if (sendbuf != MPI_IN_PLACE) return base(sendbuf, recvbuf, request, type, op);
  const MPI_Count reduce_scatter_elements = in_place_reduce_scatter_elements(call, sendbuf);
  if (request != nullptr) {  // the copy must outlive this frame: the request owns it
    if (reduce_scatter_elements > 0) {
      return start_copied_reduce_scatter(base, call, reduce_scatter_elements, recvbuf, type, op, request);
    }
    return base(sendbuf, recvbuf, request, type, op);
  }
  std::vector<char> contribution;
  if (reduce_in_place_off_root_zero(call, sendbuf)) {
    sendbuf = copy_of(recvbuf, call.recvcount, call.recvtype, contribution);
  } else if (reduce_scatter_elements > 0) {
    sendbuf = copy_of(recvbuf, reduce_scatter_elements, call.recvtype, contribution);
  }
  return base(sendbuf, recvbuf, request, type, op);
}

}  // namespace

int call_base(const BaseCall& base, const CollCall& call, const void* sendbuf, void* recvbuf, MPI_Request* request) {
  if (!base_call_may_adjust(call, sendbuf, request == nullptr)) {
    return base(sendbuf, recvbuf, request, call.recvtype, call.op);
  }
  return call_base_adjusted(base, call, sendbuf, recvbuf, request);
}

int call_base_init(const BaseCall& init, const CollCall& call, MPI_Request* request) {
  MPI_Datatype type = call.recvtype;
  MPI_Op op = call.op;
  half_substitute(call.kind, call.recvtype, call.op, &type, &op);
  const void* sendbuf = call.sendbuf;
  void* recvbuf = call.recvbuf;
  if (root_side_of_intercomm_reduce(call)) stand_in_on_root_side(call, &sendbuf, &recvbuf, &type, &op);
  return init(sendbuf, recvbuf, request, type, op);
}

}  // namespace mcrp
