#include "runtime/profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "runtime/config.h"

namespace mcrp::profile {

namespace detail {
bool g_enabled = config().profile;
}  // namespace detail

namespace {

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// The call being timed on this thread. Steps are exclusive: `step` is the one running since `mark`,
// and starting or ending a step first charges the time since `mark` to the step that was running.
struct ThreadCall {
  bool active = false;
  Form form = Form::blocking;
  Tally* row = nullptr;
  std::uint64_t started = 0;
  std::uint64_t mark = 0;
  int step = -1;
  std::uint64_t step_ns[kStepCount] = {};
  std::uint32_t timers = 1;  // the call's own timer, then each step timer started

  // Charges the time since the last switch to the running step; returns the current time.
  std::uint64_t switch_step(int next) {
    const std::uint64_t now = now_ns();
    if (step >= 0) step_ns[step] += now - mark;
    step = next;
    mark = now;
    return now;
  }
};

thread_local ThreadCall t_call;

std::vector<RowBlock*>& registered_blocks() {
  static std::vector<RowBlock*> blocks;
  return blocks;
}

// Per row and form: calls, total, steps, the timers' cost, then whether there was a first call (0 or
// 1), its total, its steps and its timers' cost.
constexpr int kValues = 2 * (3 + kStepCount);

// What one step timer costs a call on this thread: a start and a stop, each a clock read (about 30
// ns on the CPU machine), a thread-local access and some arithmetic. Timed here, in a call that is
// never reported, with the thread's own call (if any) set aside; the fastest of several rounds, as
// other work on the machine only ever adds time, and hot caches make it a lower bound too.
std::uint64_t step_timer_ns_x1000() {
  const ThreadCall saved = t_call;
  t_call = ThreadCall{};
  t_call.active = true;
  t_call.mark = now_ns();
  constexpr int kTimers = 4000;
  constexpr int kRounds = 7;
  std::uint64_t fastest = ~std::uint64_t{0};
  for (int round = 0; round < kRounds; ++round) {
    const std::uint64_t start = now_ns();
    for (int i = 0; i < kTimers; ++i) {
      StepTimer timed(Step::queue);
    }
    fastest = std::min(fastest, now_ns() - start);
  }
  t_call = saved;
  return fastest * 1000 / kTimers;
}

void collect(RowBlock& block, std::uint64_t timer_ns_x1000, std::vector<unsigned long long>* out) {
  for (int row = 0; row < block.rows(); ++row) {
    for (int form = 0; form < kFormCount; ++form) {
      const Tally& t = block.tally(row, static_cast<Form>(form));
      const std::uint64_t calls = t.calls.load(std::memory_order_relaxed);
      out->push_back(calls);
      out->push_back(t.total_ns.load(std::memory_order_relaxed));
      for (const auto& step : t.step_ns) out->push_back(step.load(std::memory_order_relaxed));
      out->push_back(t.timers.load(std::memory_order_relaxed) * timer_ns_x1000 / 1000);
      out->push_back(calls > 0 ? 1 : 0);
      out->push_back(t.first_total_ns.load(std::memory_order_relaxed));
      for (const auto& step : t.first_step_ns) out->push_back(step.load(std::memory_order_relaxed));
      out->push_back(t.first_timers.load(std::memory_order_relaxed) * timer_ns_x1000 / 1000);
    }
  }
}

void print_header(int ranks, std::uint64_t timer_ns_x1000) {
  std::fprintf(stderr,
               "# mcrpmpi profile (MCRPMPI_PROFILE=1), %d ranks: calls summed over ranks; times are mean "
               "microseconds per call over all ranks' calls but each rank's first of the row (one-time costs: "
               "`first` is their mean; rows of one call a rank show those calls)\n"
               "# steps are exclusive; other = total - steps (untimed glue); timer = what the profile's own "
               "timers cost the call (inside the steps and other); own = total - launch - wait - timer (the "
               "library's own CPU time, NCCL's launch calls, the waits and the timers left out); one step "
               "timer costs %.1f ns on rank 0 (each rank times its own)\n",
               ranks, static_cast<double>(timer_ns_x1000) / 1000.0);
  std::fprintf(stderr, "# %-24s %-8s %-11s %10s %10s %10s", "operation", "form", "path", "calls", "first", "total");
  for (int s = 0; s < kStepCount; ++s) std::fprintf(stderr, " %10s", step_name(static_cast<Step>(s)));
  std::fprintf(stderr, " %10s %10s %10s\n", "other", "timer", "own");
}

// One row: `cell` holds (collect) the sums over ranks of calls, total, steps and the timers' cost,
// then of the ranks' first calls. Value `i` (0 total, 1 + step, 1 + kStepCount timers) as a mean in
// us over the calls after the first ones, or over the first ones when there are no others.
void print_row(const char* operation, const char* path, Form form, const unsigned long long* cell) {
  const unsigned long long* first = cell + 3 + kStepCount;
  const unsigned long long firsts = first[0];
  const unsigned long long later = cell[0] - firsts;
  auto first_mean = [&](int i) { return static_cast<double>(first[1 + i]) / static_cast<double>(firsts) * 1e-3; };
  auto mean = [&](int i) {
    if (later == 0) return first_mean(i);
    return static_cast<double>(cell[1 + i] - first[1 + i]) / static_cast<double>(later) * 1e-3;
  };
  const double total = mean(0);
  double steps = 0;
  std::fprintf(stderr, "  %-24s %-8s %-11s %10llu %10.3f %10.3f", operation, form == Form::blocking ? "blocking" : "start",
               path, cell[0], first_mean(0), total);
  for (int s = 0; s < kStepCount; ++s) {
    const double step = mean(1 + s);
    steps += step;
    std::fprintf(stderr, " %10.3f", step);
  }
  auto step_mean = [&](Step s) { return mean(1 + static_cast<int>(s)); };
  const double timers = mean(1 + kStepCount);
  std::fprintf(stderr, " %10.3f %10.3f %10.3f\n", total - steps, timers,
               total - step_mean(Step::launch) - step_mean(Step::wait) - timers);
}

}  // namespace

const char* step_name(Step step) {
  static const char* const names[kStepCount] = {"classify", "decide", "queue", "device", "order",
                                                "record",   "launch", "wait",  "finish"};
  return names[static_cast<int>(step)];
}

RowBlock::RowBlock(int rows, Namer namer) : rows_(rows), namer_(namer), tallies_(new Tally[rows * kFormCount]) {
  registered_blocks().push_back(this);
}

RowBlock::~RowBlock() {
  std::vector<RowBlock*>& blocks = registered_blocks();
  blocks.erase(std::remove(blocks.begin(), blocks.end(), this), blocks.end());
}

void CallTimer::begin(Form form) {
  ThreadCall& t = t_call;
  if (t.active) return;  // nested: part of the outer call
  armed_ = true;
  t = ThreadCall{};
  t.active = true;
  t.form = form;
  t.started = t.mark = now_ns();
}

void CallTimer::end() {
  ThreadCall& t = t_call;
  const std::uint64_t now = t.switch_step(-1);
  t.active = false;
  if (t.row == nullptr) return;
  const bool first = t.row->calls.fetch_add(1, std::memory_order_relaxed) == 0;
  t.row->total_ns.fetch_add(now - t.started, std::memory_order_relaxed);
  for (int s = 0; s < kStepCount; ++s) t.row->step_ns[s].fetch_add(t.step_ns[s], std::memory_order_relaxed);
  t.row->timers.fetch_add(t.timers, std::memory_order_relaxed);
  if (!first) return;
  t.row->first_total_ns.store(now - t.started, std::memory_order_relaxed);
  for (int s = 0; s < kStepCount; ++s) t.row->first_step_ns[s].store(t.step_ns[s], std::memory_order_relaxed);
  t.row->first_timers.store(t.timers, std::memory_order_relaxed);
}

void charge(RowBlock& block, int row) {
  ThreadCall& t = t_call;
  if (t.active && t.row == nullptr) t.row = &block.tally(row, t.form);
}

// Not inlined, here either: step_timer_ns_x1000 times the calls the other files make.
[[gnu::noinline]] void StepTimer::begin(Step step) {
  ThreadCall& t = t_call;
  if (!t.active) return;
  armed_ = true;
  outer_ = t.step;
  ++t.timers;
  t.switch_step(static_cast<int>(step));
}

[[gnu::noinline]] void StepTimer::end() {
  armed_ = false;
  t_call.switch_step(outer_);
}

void report(MPI_Comm world) {
  if (!enabled()) return;
  std::vector<unsigned long long> local;
  const std::uint64_t timer_ns_x1000 = step_timer_ns_x1000();
  for (RowBlock* block : registered_blocks()) collect(*block, timer_ns_x1000, &local);
  std::vector<unsigned long long> total(local.size());
  int rank = 0, size = 0;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  PMPI_Reduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, world);
  if (rank != 0) return;
  print_header(size, timer_ns_x1000);
  const unsigned long long* cell = total.data();
  for (RowBlock* block : registered_blocks()) {
    for (int row = 0; row < block->rows(); ++row) {
      for (int form = 0; form < kFormCount; ++form, cell += kValues) {
        if (cell[0] == 0) continue;
        const char* operation = "";
        const char* path = "";
        block->name(row, &operation, &path);
        print_row(operation, path, static_cast<Form>(form), cell);
      }
    }
  }
  std::fflush(stderr);
}

}  // namespace mcrp::profile
