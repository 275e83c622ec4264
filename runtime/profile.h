// MCRPMPI_PROFILE=1: where the library's time goes. Each call into the library (a collective, a
// point-to-point operation or a local call such as MPI_Pack) is timed from entry to return, and
// split into steps by scoped timers placed where the work happens (memory-kind detection, staging
// copies, the base MPI call, the GPU wait, the NCCL enqueue). Steps are exclusive: a step timed
// inside another is subtracted from the outer one, so the steps of a call never add up to more than
// its total. At MPI_Finalize rank 0 prints one table for all ranks (report()).
//
// Off (the default), a timer costs a test of a flag read once when the library is loaded, at its
// start and at its end: nothing is read from the clock or from thread-local storage. On, a step costs
// two clock reads; times go to per-thread state first and to relaxed atomics once per call, so
// threads of an MPI_THREAD_MULTIPLE program never wait on each other. What the timers themselves cost
// a call (its step timers counted, times the cost of one measured at the report) is reported apart
// and left out of the library's own time.
//
// This header depends on nothing else of the library, so device/ may time its waits too.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace mcrp::profile {

enum class Step : std::uint8_t {
  classify,  // memory-kind detection and which arguments are significant (the layout)
  decide,    // argument validation, datatype facts, the route and its tuning-table lookup
  queue,     // issuing the work: NCCL communicator lookup, device views, staged copies in
  // The NCCL path's CUDA calls around a blocking call's launch, one step each, since on the H200 under
  // MPS they took 2.39 us a call together in place against 0.6 us timed alone (docs/performance.md,
  // "Profiling"):
  device,    // the device guard (cudaGetDevice, cudaSetDevice where another device is current)
  order,     // the ordering after the legacy default stream (its query, an event record + wait if busy)
  record,    // the completion event: taken from the pool and recorded (its polls are `wait`)
  launch,    // inside NCCL's launch calls (group start to group end): the backend's CPU time
  wait,      // time inside the base MPI, or waiting for the GPU
  finish,    // copies out, unpacking, the request the caller completes
};
inline constexpr int kStepCount = 9;
const char* step_name(Step step);

// Blocking calls are timed until they return with the result in place; nonblocking and persistent
// starts until the start returns (work done later inside MPI_Wait/MPI_Test is not in the table).
enum class Form : std::uint8_t { blocking, started };
inline constexpr int kFormCount = 2;

namespace detail {
extern bool g_enabled;  // MCRPMPI_PROFILE, read once when the library is loaded (tests may set it)
}  // namespace detail

inline bool enabled() { return detail::g_enabled; }

// The accumulated times of one report row and form. Relaxed atomics: totals, not a synchronization.
struct Tally {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> total_ns{0};
  std::atomic<std::uint64_t> step_ns[kStepCount] = {};
  std::atomic<std::uint64_t> timers{0};  // timers started (the call's own included), for the timer column
  // The process's first call of the row, also in the sums above: the report leaves it out of the
  // means, since it pays one-time costs (an NCCL communicator's setup: about a second on the H200,
  // which made the mean of 11,000 calls 136 us where the benchmark read 42).
  std::atomic<std::uint64_t> first_total_ns{0};
  std::atomic<std::uint64_t> first_step_ns[kStepCount] = {};
  std::atomic<std::uint64_t> first_timers{0};
};

// The rows one layer reports (collectives: collective x path; point-to-point: operation x path),
// indexed by the layer, each with a tally per form. Each layer defines one as a static object; it
// registers itself for report(), which prints the blocks in registration order (the same on every
// rank: they are all the same library).
class RowBlock {
 public:
  // Gives row `row`'s operation ("MPI_Allreduce") and path ("staged"): static strings.
  using Namer = void (*)(int row, const char** operation, const char** path);
  RowBlock(int rows, Namer namer);
  ~RowBlock();  // unregisters (blocks made by tests)
  RowBlock(const RowBlock&) = delete;
  RowBlock& operator=(const RowBlock&) = delete;

  int rows() const { return rows_; }
  void name(int row, const char** operation, const char** path) const { namer_(row, operation, path); }
  Tally& tally(int row, Form form) { return tallies_[static_cast<std::size_t>(row * kFormCount + static_cast<int>(form))]; }

 private:
  int rows_;
  Namer namer_;
  std::unique_ptr<Tally[]> tallies_;
};

// Times one call from construction to destruction and adds it to the row named by charge_to().
// A call started while another is being timed on the same thread (a blocking call run as its
// nonblocking form plus a wait) is part of the outer one: the inner timer does nothing.
class CallTimer {
 public:
  explicit CallTimer(Form form) {
    if (enabled()) begin(form);
  }
  ~CallTimer() {
    if (armed_) end();
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  void begin(Form form);
  void end();
  bool armed_ = false;
};

// The call being timed on this thread is reported in `block`'s row `row`; the first row named wins
// (the router names it once the path is known). A call never named is not reported.
void charge(RowBlock& block, int row);
inline void charge_to(RowBlock& block, int row) {
  if (enabled()) charge(block, row);
}

// Times one step of the call being timed on this thread, until destruction or stop(). Outside a
// timed call (a nonblocking request progressed inside MPI_Wait) it does nothing.
class StepTimer {
 public:
  explicit StepTimer(Step step) {
    if (enabled()) begin(step);
  }
  ~StepTimer() { stop(); }
  void stop() {
    if (armed_) end();
  }
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

 private:
  void begin(Step step);
  void end();
  bool armed_ = false;
  int outer_ = -1;  // the step this one interrupted (-1: none)
};

// Collective over `world` (at MPI_Finalize): every rank's tallies summed on rank 0, which prints
// the table on stderr. Does nothing unless MCRPMPI_PROFILE is set.
void report(MPI_Comm world);

}  // namespace mcrp::profile
