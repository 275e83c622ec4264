// The base MPI's own entry point for the call being routed, as a non-owning callable whose buffer,
// datatype and op arguments can be replaced: the staged path passes host copies of the buffers, and
// fp16 reductions get a substitute type and op (collectives/half_reduction.h). The pmpi/ wrappers
// build it from a lambda whose parameters shadow the user's sendbuf, recvbuf, request, datatype and
// op; see pmpi/collectives.def.
#pragma once
#include <mpi.h>

#include <functional>

#include "collectives/call.h"
#include "collectives/intercomm_bcast.h"
#include "runtime/profile.h"
#include "runtime/staged_sides.h"

namespace mcrp {

class BaseCall {
 public:
  template <typename Fn>
  explicit BaseCall(Fn& fn)
      : target_(&fn), invoke_([](void* target, const void* s, void* r, MPI_Request* q, MPI_Datatype t, MPI_Op o) {
          return (*static_cast<Fn*>(target))(s, r, q, t, o);
        }) {}

  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request, MPI_Datatype datatype, MPI_Op op) const {
    profile::StepTimer in_base_mpi(profile::Step::wait);
    return invoke_(target_, sendbuf, recvbuf, request, datatype, op);
  }

 private:
  void* target_;
  int (*invoke_)(void*, const void*, void*, MPI_Request*, MPI_Datatype, MPI_Op);
};

// The arrays a persistent request passes the base MPI at every start: its own copies
// (collectives/array_copies.h), which the wrapper's lambda puts in place of the user's arrays, since
// those may be gone by then (pmpi/collective_wrapper_macros.h).
struct BaseArrays {
  CountArray sendcounts, sdispls, recvcounts, rdispls;
  const MPI_Datatype* sendtypes = nullptr;  // MPI_Alltoallw, MPI_Neighbor_alltoallw
  const MPI_Datatype* recvtypes = nullptr;
};

// One of them as an argument of either form of the base MPI's entry point (int[] or MPI_Count[]);
// an entry point is only ever given arrays of its own form.
class ArrayArgument {
 public:
  explicit ArrayArgument(const CountArray& array) : array_(array) {}
  operator const int*() const { return array_.narrow_data(); }         // NOLINT: implicit by design
  operator const MPI_Count*() const { return array_.wide_data(); }     // NOLINT: implicit by design

 private:
  CountArray array_;
};

// A base call that outlives the wrapper (persistent requests run it at every MPI_Start), with the
// arrays it is to pass.
using OwnedBaseCall = std::function<int(const void*, void*, MPI_Request*, MPI_Datatype, MPI_Op, const BaseArrays&)>;

// An OwnedBaseCall bound to its arrays, to be run as a BaseCall.
class BaseWithArrays {
 public:
  BaseWithArrays(const OwnedBaseCall& base, const BaseArrays& arrays) : base_(base), arrays_(arrays) {}
  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request, MPI_Datatype datatype, MPI_Op op) const {
    return base_(sendbuf, recvbuf, request, datatype, op, arrays_);
  }

 private:
  const OwnedBaseCall& base_;
  BaseArrays arrays_;
};

// A base call whose datatypes, op and counts the wrapper's lambda takes from its own arguments, run
// by the staged core (runtime/staged_sides.h) with only the buffers and the request substituted:
// the block collectives' and the local calls'.
class BuffersOnlyBase final : public StagedBase {
 public:
  explicit BuffersOnlyBase(const BaseCall& base) : base_(base) {}
  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request) const override {
    return base_(sendbuf, recvbuf, request, MPI_DATATYPE_NULL, MPI_OP_NULL);
  }

 private:
  const BaseCall& base_;
};

// An allgatherv whose first block does not start at recvbuf, not in place: MPICH 4.0.2 puts it at
// recvbuf on a one-rank communicator (call_base then moves recvbuf where that rank's probe shows it).
[[gnu::always_inline]] inline bool allgatherv_displaced(const CollCall& call, const void* sendbuf) {
  return call.kind == CollKind::allgatherv && sendbuf != MPI_IN_PLACE && call.rdispls.present() &&
         call.rdispls[0] != 0;
}

// An intercommunicator reduce on a rank of the root's group: root MPI_ROOT, whose send side MPI
// makes insignificant, or MPI_PROC_NULL, where only root and comm are. Base MPIs check them anyway:
// MPICH 4.0 rejects a null sendbuf at MPI_ROOT (MPI_ERR_BUFFER), and on MPI_PROC_NULL ranks MPICH
// 4.1.3 crashes on MPI_DATATYPE_NULL and MPICH 5.0.2 aborts on it with a count above 0
// (docs/base-mpi-defects.md). MPI_ROOT and MPI_PROC_NULL are roots on intercommunicators only, so
// no query is needed.
[[gnu::always_inline]] inline bool root_side_of_intercomm_reduce(const CollCall& call) {
  return call.kind == CollKind::reduce && (call.root == MPI_ROOT || call.root == MPI_PROC_NULL);
}

// Whether call_base may hand the base MPI anything but the caller's arguments for `call` on these
// buffers (`blocking`: no request), avoiding a defect of the base MPI: an fp16 type (any op, to
// be safe), a displaced allgatherv, the in-place reduce of a blocking call, an in-place
// reduce_scatter (blocking or not), a nonblocking bcast on an intercommunicator (another
// collective of the base MPI's instead), or the root's side of an intercommunicator reduce
// (stand-ins for what MPI leaves insignificant there).
// False for every other call, which call_base then passes as it is; host calls that go straight
// from their wrapper to the base MPI (collectives/host_direct.h) ask it too, so the two cannot
// drift apart. Inline: folded per entry point.
[[gnu::always_inline]] inline bool base_call_may_adjust(const CollCall& call, const void* sendbuf, bool blocking) {
  if (call.recvtype == MPIX_C_FLOAT16 || allgatherv_displaced(call, sendbuf)) return true;
  if (intercomm_nonblocking_bcast(call, blocking) || root_side_of_intercomm_reduce(call)) return true;
  return sendbuf == MPI_IN_PLACE && (call.kind == CollKind::reduce_scatter || (blocking && call.kind == CollKind::reduce));
}

// Calls the base MPI for `call` on the given buffers. The datatype and op are the caller's, except
// for fp16 reductions, which the base MPI cannot do itself (see half_reduction.h).
int call_base(const BaseCall& base, const CollCall& call, const void* sendbuf, void* recvbuf,
              MPI_Request* request = nullptr);
// The same for the base MPI's persistent initialisation (MPI_<Name>_init) on the user's buffers:
// only the fp16 substitution and the stand-ins of an intercommunicator reduce's root side apply (an
// in-place reduce_scatter never gets here: the library owns its persistent requests,
// collectives/dispatch.cpp).
int call_base_init(const BaseCall& init, const CollCall& call, MPI_Request* request);

}  // namespace mcrp
