// A thread of one NCCL communicator for the NCCL calls that may wait for peers or for the device:
// the setup call (a blocking communicator's waits for every member; a nonblocking one's makes a
// page-locked allocation, which may wait for the kernels in flight), and a launch that connects to
// peers it has not exchanged data with yet (MCRPMPI_NCCL_INLINE_LAUNCH, runtime/nccl_comm.h). The
// caller goes on driving MPI progress and polls busy(), as it polls ncclInProgress on a nonblocking
// communicator; unlike NCCL's own nonblocking mode, which starts a thread at every ncclGroupEnd,
// this thread is started once and only the calls that may wait come here.
//
// A job gets values only (handles, pointers, counts): the objects of the call that started it may be
// gone when a job stuck on a peer that never came returns, after the caller's MCRPMPI_NCCL_TIMEOUT.
#pragma once
#include <nccl.h>

#include <functional>
#include <memory>
#include <thread>

namespace mcrp {

class NcclSideThread {
 public:
  NcclSideThread() = default;
  // Joins the thread when no job runs; else leaves it to finish the job, run `abandoned` (see
  // abandon()) and end.
  ~NcclSideThread();
  NcclSideThread(const NcclSideThread&) = delete;
  NcclSideThread& operator=(const NcclSideThread&) = delete;

  // Runs `job` on the thread (started at the first job). Only when !busy().
  void start(std::function<ncclResult_t()> job);
  bool busy() const;
  // The last job's result, once !busy().
  ncclResult_t result() const;
  // What the thread does after a job that is still running when this object is destroyed (release
  // what the job holds: the communicator it works on). Set before destruction, while busy().
  void abandon(std::function<void()> then);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace mcrp
