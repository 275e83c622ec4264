// Time per call of a cheap operation, for the unit benchmarks: the fastest of several rounds, since
// on a shared machine other work only ever adds time.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>

namespace mcrp_bench {

// Mean nanoseconds per call of `call` over `calls` calls, the best of `rounds` rounds, after a warm-up
// (first-touch costs such as TLS, /proc or a driver's lazy set-up are left out). `call` returns a
// value that is kept, and is called through std::function, so that the compiler can neither drop
// the work nor hoist it out of the loop (the figures docs/performance.md quotes include that call).
inline double nanoseconds_per_call(const std::function<bool()>& call, int calls = 1 << 18, int rounds = 9) {
  volatile bool sink = false;
  for (int i = 0; i < 1024; ++i) sink = call();
  double best = 1e30;
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) sink = call();
    const std::chrono::duration<double, std::nano> spent = std::chrono::steady_clock::now() - start;
    best = std::min(best, spent.count() / calls);
  }
  (void)sink;
  return best;
}

}  // namespace mcrp_bench
