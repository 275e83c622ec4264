// A fake NCCL communicator: one worker thread per communicator plays the part of its CUDA stream,
// running submitted work in order on host memory and moving bytes through the shared segment's rings.
// Like a GPU it makes progress whatever the calling threads do, so the library's nonblocking
// machinery, ordering and failure handling run as they would on a device.
//
// Blocking communicators (config.blocking = 1, raw NCCL's and the library's default,
// MCRPMPI_NCCL_INLINE_LAUNCH) model what NCCL does on the caller there: the setup waits for every
// rank, and a launch that uses a point-to-point connection not used before (ncclSend, ncclRecv,
// AlltoAll, Gather, Scatter; one per peer and direction) first waits for the peer's launch that
// opens the other end, as NCCL's connection setup at launch does. The collectives' connections are
// open from the setup, as with NCCL_RUNTIME_CONNECT=0. A launch then returns once its work is
// queued (late kernels) or done (the first model).
//
// The communicators are nonblocking in the way the library configures NCCL's (config.blocking = 0):
// ncclCommGetAsyncError reports ncclInProgress while the communicator is set up and while a finalize
// flushes its work. A launch returns once its work is queued, as NCCL's does once its kernel is enqueued, and the work
// completes later: the library learns it from an event recorded on the launch's stream, which the
// fake device then tracks (device/fake_device.h, set_fake_stream_marks), and copies it issues on
// that stream run after the work (device_model.h). With MCRPMPI_FAKE_NCCL_LATE=0 (late_kernels()
// false: the fake's first model, kept for the instruction counts of tests/cost, whose budgets were
// set with it) a nonblocking communicator instead answers ncclInProgress until the work is done,
// and the fake device's events are always complete.
#pragma once
#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fake_nccl/shared_segment.h"
#include "tests/fake_nccl/work.h"

namespace fake_nccl {

// MCRPMPI_FAKE_NCCL_LATE unset or not 0, read once.
bool late_kernels();

class Comm {
 public:
  Comm(int nranks, int rank, bool blocking);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // Maps the segment for `name` and starts the worker; false with last_error() set when it cannot.
  bool start(const std::string& name);
  // Queues work; a blocking communicator waits for it. ncclInProgress while it runs (nonblocking).
  ncclResult_t submit(Work work);
  // ncclCommGetAsyncError: the failure, ncclInProgress while setting up or working, else success.
  ncclResult_t state();
  // Nothing to flush beyond the queue, but like NCCL's, a nonblocking communicator's finalize
  // answers ncclInProgress first and completes at a later ncclCommGetAsyncError, so the caller's
  // wait loop (and the progress it makes meanwhile) runs as it does on a GPU.
  ncclResult_t finalize();
  void stop();              // abort or destroy: the worker leaves, queued work is dropped
  bool idle();              // nothing in flight: all submitted work done, or none will be (failed, stopped)
  std::uint64_t submitted();                   // tickets handed out so far (the last submission's)
  // That submission and those before have ended: done, or the communicator stopped or revoked. A
  // failure alone does not end them: like a kernel waiting for a dead peer, they hang until then.
  bool done_through(std::uint64_t ticket);
  void revoke();            // ncclCommRevoke: fails the communicator and ends its work
  void fail(ncclResult_t result, const std::string& why);
  std::string last_error();

  const int nranks;
  const int rank;
  const bool blocking;

 private:
  void run();                            // the worker
  bool execute(Work& work);              // false when stopped or failed
  bool wait_for_peers();                 // until every rank has mapped the segment
  bool stalled(unsigned* idle_rounds);   // backs off; false when the wait must end
  bool a_peer_died();
  ncclResult_t connect(const Work& work);  // a blocking communicator's new connections (see above)

  Segment segment_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Work> queue_;
  std::uint64_t submitted_ = 0, completed_ = 0;
  bool stopping_ = false;
  bool revoked_ = false;
  bool finalize_reported_ = true;  // false from a nonblocking finalize until state() has said ncclInProgress once
  std::atomic<ncclResult_t> failure_{ncclSuccess};
  std::string error_;
  std::vector<char> sends_open_, receives_open_;  // by peer; touched by the launching thread only
};

}  // namespace fake_nccl
