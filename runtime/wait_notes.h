// What each thread is waiting for inside the library, for the report printed when
// MCRPMPI_NCCL_TIMEOUT expires (runtime/state_report.h). A thread notes its outermost wait in its
// own record for the wait's length. The waits of blocking NCCL calls (MpiProgress) note themselves
// only once they have polled 64 times, so that a call that completes at once pays nothing here.
#pragma once
#include <pthread.h>

#include <chrono>
#include <string>
#include <vector>

namespace mcrp {

class NcclComm;

// Notes a wait begun at `since` (what: a string literal, "a blocking NCCL call"; comm: the NCCL
// communicator waited on, or null). Returns false, noting nothing, when the thread's outermost wait
// is already noted; else true, and note_wait_ended() ends the note.
bool note_wait_begun(const char* what, const NcclComm* comm, std::chrono::steady_clock::time_point since);
void note_wait_ended();

// A wait noted for its scope.
class WaitNote {
 public:
  WaitNote(const char* what, const NcclComm* comm,
           std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now())
      : noted_(note_wait_begun(what, comm, since)) {}
  ~WaitNote() {
    if (noted_) note_wait_ended();
  }
  WaitNote(const WaitNote&) = delete;
  WaitNote& operator=(const WaitNote&) = delete;

 private:
  bool noted_;
};

// The threads in a noted wait now, longest first.
struct ThreadWait {
  int thread = 0;  // runtime/thread_id.h
  std::string what;
  const NcclComm* comm = nullptr;
  double seconds = 0;
};
std::vector<ThreadWait> threads_waiting();

// The kernel's id of a thread that has noted a wait, by its pthread id; 0 if it never has.
int thread_id_of(pthread_t thread);

}  // namespace mcrp
