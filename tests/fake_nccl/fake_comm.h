// A fake NCCL communicator: one worker thread per communicator plays the part of its CUDA stream,
// running submitted work in order on host memory and moving bytes through the shared segment's rings.
// Like a GPU it makes progress whatever the calling threads do, so the library's nonblocking
// machinery, ordering and failure handling run as they would on a device.
//
// The communicators are nonblocking in the way the library configures NCCL's (config.blocking = 0):
// calls return ncclInProgress and ncclCommGetAsyncError reports ncclInProgress until the work is done.
// Since the fake device's streams and events are always complete, this is how the library learns when
// the data is in place: its wait for the enqueue to finish covers the whole operation.
#pragma once
#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "tests/fake_nccl/shared_segment.h"
#include "tests/fake_nccl/work.h"

namespace fake_nccl {

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

  Segment segment_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Work> queue_;
  std::uint64_t submitted_ = 0, completed_ = 0;
  bool stopping_ = false;
  bool finalize_reported_ = true;  // false from a nonblocking finalize until state() has said ncclInProgress once
  std::atomic<ncclResult_t> failure_{ncclSuccess};
  std::string error_;
};

}  // namespace fake_nccl
