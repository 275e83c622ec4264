// What each thread is waiting for inside the library, for the report printed when
// MCRPMPI_NCCL_TIMEOUT expires (runtime/state_report.h). A thread that waits (for the GPU, NCCL, a
// peer) notes it for the wait's length; every blocking NCCL call does, so a note is a few stores
// into the thread's own record, and only the outermost wait of a thread is noted.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace mcrp {

class NcclComm;

class WaitNote {
 public:
  // what: a string literal ("a blocking NCCL call"); comm: the NCCL communicator waited on, or null.
  WaitNote(const char* what, const NcclComm* comm,
           std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now());
  ~WaitNote();
  WaitNote(const WaitNote&) = delete;
  WaitNote& operator=(const WaitNote&) = delete;

 private:
  bool noted_;  // this is the thread's outermost wait
};

// The threads in a noted wait now, longest first.
struct ThreadWait {
  int thread = 0;  // runtime/thread_id.h
  std::string what;
  const NcclComm* comm = nullptr;
  double seconds = 0;
};
std::vector<ThreadWait> threads_waiting();

}  // namespace mcrp
