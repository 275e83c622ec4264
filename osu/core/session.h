// What every benchmark does before measuring: MPI up (and down again on every path), options parsed,
// the GPU chosen for -d cuda.
#pragma once
#include <mpi.h>

#include "osu/core/options.h"

namespace osu {

// Exit code of a -d cuda run on a machine with no GPU: ctest's skip code, so GPU tests skip there.
inline constexpr int kNoDeviceExit = 77;

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Parses argv and selects the device (device_only: as if -d cuda were given). Returns -1 to go on,
  // else the exit code for main: kNoDeviceExit when a GPU is wanted and there is none.
  int prepare(int argc, char** argv, Options* opt, bool device_only = false);

 private:
  int rank_ = 0;
  int size_ = 1;
};

// True when the hidden test switch OSU_CORRUPT_RESULT=1 asks rank 0 to spoil a result before
// validating it, to prove -c reports failures.
bool corrupt_results_requested();

// Seconds to spin for the nonblocking benchmarks' "compute" phase (busy, like OSU's dummy compute).
void spin_for(double seconds);

}  // namespace osu
