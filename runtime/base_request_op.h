// An op that is one request of the base MPI's on host memory, started by the subclass with
// arguments it owns, since MPI lets the base MPI read them until the request completes (the
// arrays of the intercommunicator bcast's alltoallv, the copied contribution of an in-place
// reduce_scatter). Complete when the base request is; a failure is the base MPI's, already raised.
#pragma once
#include <mpi.h>

#include "runtime/errors.h"
#include "runtime/requests.h"

namespace mcrp {

class BaseRequestOp : public AsyncOp {
 public:
  Status progress(bool* done) override {
    int flag = 0;
    const int rc = PMPI_Test(&inner_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return already_raised(rc);
    *done = flag != 0;
    return {};
  }
  bool left_device_work() const override { return false; }  // host memory only: the base MPI's

 protected:
  MPI_Request inner_ = MPI_REQUEST_NULL;  // what the subclass starts
};

}  // namespace mcrp
