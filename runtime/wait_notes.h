// What each thread is waiting for inside the library, for the report printed when
// MCRPMPI_NCCL_TIMEOUT expires (runtime/state_report.h). A thread notes its outermost wait in its
// own record for the wait's length. Polling waits note themselves only once they have polled 64
// times (WaitNote::polled), so that a call that completes at once pays nothing here; an inner wait
// that reaches its 64th poll before its outer one has is noted in the outer one's stead, until it
// ends.
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

// A wait noted for its scope, lazily: a polling wait calls polled() on each poll and is noted at
// its 64th, so that a wait that ends sooner pays a counter only. A wait that does not poll, or
// wants its note at once, calls note_now().
class WaitNote {
 public:
  static constexpr unsigned kPollsBetweenChecks = 64;  // a power of two

  // since: when the wait began; by default, when it is noted.
  WaitNote(const char* what, const NcclComm* comm, std::chrono::steady_clock::time_point since = {})
      : what_(what), comm_(comm), since_(since) {}
  ~WaitNote() {
    if (noted_) note_wait_ended();
  }
  WaitNote(const WaitNote&) = delete;
  WaitNote& operator=(const WaitNote&) = delete;

  // Counts a poll. True on every 64th, once the wait is noted: where a wait's costlier checks
  // (an error state, a clock) belong too.
  bool polled() {
    if ((++polls_ & (kPollsBetweenChecks - 1)) != 0) return false;
    note_now();
    return true;
  }
  // Notes the wait now unless it is noted already (or an outer wait of the thread's is).
  void note_now() {
    if (!tried_) {
      tried_ = true;
      noted_ = note_wait_begun(what_, comm_, since_ != decltype(since_){} ? since_ : std::chrono::steady_clock::now());
    }
  }

 private:
  const char* what_;
  const NcclComm* comm_;
  std::chrono::steady_clock::time_point since_;
  unsigned polls_ = 0;
  bool tried_ = false;  // note_now() has run: a refused note is not asked again
  bool noted_ = false;
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
