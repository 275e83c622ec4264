#include "collectives/base_call.h"

#include "collectives/half_reduction.h"

namespace mcrp {

int call_base(const BaseCall& base, const CollCall& call, const void* sendbuf, void* recvbuf, MPI_Request* request) {
  MPI_Datatype type = call.recvtype;  // the one datatype of reductions and bcast (describe::one_type)
  MPI_Op op = call.op;
  half_substitute(call.kind, call.recvtype, call.op, &type, &op);
  return base(sendbuf, recvbuf, request, type, op);
}

}  // namespace mcrp
