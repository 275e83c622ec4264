#include "collectives/intercomm_bcast.h"

#include <memory>
#include <vector>

#include "collectives/kind.h"
#include "collectives/layout.h"
#include "runtime/base_request_op.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/requests.h"

namespace mcrp {
namespace {

// The alltoallv's arguments, owned until it completes: MPI lets the base MPI read them until then.
class IntercommBcast final : public BaseRequestOp {
 public:
  explicit IntercommBcast(int remote_size)
      : sendcounts_(remote_size, 0), recvcounts_(remote_size, 0), displacements_(remote_size, 0) {}

  // The root sends `count` to every remote rank; a remote rank receives `count` from the root.
  int start(const CollCall& call, void* buffer, MPI_Datatype datatype) {
    if (call.root == MPI_ROOT) sendcounts_.assign(sendcounts_.size(), call.recvcount);
    if (call.root >= 0) recvcounts_[call.root] = call.recvcount;
    // Only one side moves data on any rank: the other buffer is empty (zero counts) and must not
    // alias the user's, so it is a byte of this op's own.
    void* sendbuf = call.root == MPI_ROOT ? buffer : &unused_;
    void* recvbuf = call.root >= 0 ? buffer : &unused_;
    // A bystander passes MPI_BYTE: its datatype argument is not significant and may be anything.
    if (call.root == MPI_PROC_NULL) datatype = MPI_BYTE;
    return PMPI_Ialltoallv_c(sendbuf, sendcounts_.data(), displacements_.data(), datatype, recvbuf,
                             recvcounts_.data(), displacements_.data(), datatype, call.comm, &inner_);
  }

 private:
  std::vector<MPI_Count> sendcounts_, recvcounts_;
  std::vector<MPI_Aint> displacements_;
  char unused_ = 0;
};

}  // namespace

bool start_intercomm_bcast(const CollCall& call, void* buffer, MPI_Datatype datatype, MPI_Request* request,
                           int* rc) {
  Participant self;
  if (!participant_of(call.comm, &self) || !self.inter) return false;
  if (call.root != MPI_ROOT && call.root != MPI_PROC_NULL && (call.root < 0 || call.root >= self.peers)) return false;
  const char* name = nonblocking_mpi_name(call.kind);
  auto fail = [&](const Status& status) {
    *request = MPI_REQUEST_NULL;
    return raise_error(call.comm, name, self.size, status);  // the base MPI's own error: as it raised it
  };
  *rc = guarded(
      [&] {
        auto op = std::make_unique<IntercommBcast>(self.peers);
        Status status = from_base(op->start(call, buffer, datatype));
        if (status.ok()) status = start_generalized(std::move(op), call.comm, name, {datatype}, request);
        return status.ok() ? MPI_SUCCESS : fail(status);
      },
      fail);
  return true;
}

}  // namespace mcrp
