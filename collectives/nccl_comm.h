// One NCCL communicator per MPI communicator, created lazily and collectively by the first call that
// routes to NCCL, cached as an MPI attribute and destroyed by the attribute's delete callback (so
// MPI_Comm_free, MPI_Comm_disconnect and MPI_Finalize release it). Creation is agreed: when any rank
// cannot load NCCL or fails to initialise, every rank marks the communicator unusable and the calls
// take the staged path instead, on all ranks alike.
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <mutex>

#include "device/handles.h"
#include "device/status.h"

namespace mcrp {

class NcclComm {
 public:
  ncclComm_t handle = nullptr;
  int device = -1;
  int size = 0;
  int rank = 0;
  device::Stream stream;  // ordered after the legacy default stream
  bool broken = false;    // set after a failure aborted the communicator

  ~NcclComm();
};

// Sets *out to the NCCL communicator for `comm` on `device`, or to null when NCCL cannot serve
// this communicator (all ranks agree). Collective over `comm` the first time.
Status nccl_comm_for(MPI_Comm comm, int device, NcclComm** out);

// Waits for an NCCL call that returned ncclInProgress (the communicators are nonblocking, so that
// no NCCL wait can hang without the library noticing) and converts the result to a Status.
Status settle(NcclComm& comm, ncclResult_t result, const char* what);

// NCCL forbids concurrent calls on communicators of one device from several threads: every
// launch (group start to group end) and creation holds this lock.
std::mutex& nccl_launch_mutex();

// Destroys the communicator cached on MPI_COMM_WORLD; MPI_Finalize calls this before PMPI_Finalize,
// because the standard only promises attribute deletion on MPI_COMM_SELF there.
void release_world_nccl_comm();

}  // namespace mcrp
