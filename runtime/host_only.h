// Whether this process is one where no call can need the library's routing: no CUDA (so no device
// buffer, no NCCL, no device-only communicator and no background work), and none of the settings
// that watch host calls (MCRPMPI_PROFILE, MCRPMPI_VERIFY, MCRPMPI_STATS). Then a host call goes
// straight to the base MPI after the library's own argument checks (counts from 2^24 up, and the
// collectives' MPI_IN_PLACE and vector-array checks).
//
// Inline, the answer kept in one byte settled at the first call (the settings are read once
// anyway): one load and one test per call. Not a function-local static: its guard made every
// wrapper that asks save its registers for the initialising call, on the direct path too
// (tests/cost counts it); the settling call is out of line and taken once.
#pragma once
#include <atomic>
#include <cstdint>

namespace mcrp {

namespace host_only_detail {
enum : std::int8_t { kUnsettled = -1, kRouted = 0, kDirect = 1 };
// One per question below.
extern std::atomic<std::int8_t> g_process, g_blocking_collectives, g_unwatched, g_unwatched_blocking_collectives;
// Settles all from CUDA's presence and the settings; returns the answer asked for.
[[gnu::cold, gnu::noinline]] bool settle(const std::atomic<std::int8_t>* asked);

[[gnu::always_inline]] inline bool read(std::atomic<std::int8_t>& answer) {
  const std::int8_t known = answer.load(std::memory_order_relaxed);
  if (__builtin_expect(known == kUnsettled, 0)) return settle(&answer);
  return known == kDirect;
}
}  // namespace host_only_detail

[[gnu::always_inline]] inline bool host_only_process() {
  return host_only_detail::read(host_only_detail::g_process);
}

// The same for a blocking collective, which in addition must not be one that
// MCRPMPI_POLLING_COLLECTIVES (or MCRPMPI_P2P_DEVICE_ONLY) runs as a nonblocking call and a
// polling wait (runtime/config.h).
[[gnu::always_inline]] inline bool host_only_blocking_collectives() {
  return host_only_detail::read(host_only_detail::g_blocking_collectives);
}

// Whether no setting watches host calls (MCRPMPI_PROFILE, MCRPMPI_VERIFY, MCRPMPI_STATS), CUDA or
// not: in a process with CUDA, a host call may then still go straight to the base MPI once its
// buffers are found to be host memory (collectives/host_direct.h, p2p/dispatch.h).
[[gnu::always_inline]] inline bool host_calls_unwatched() { return host_only_detail::read(host_only_detail::g_unwatched); }

// The same for a blocking collective, not run as a nonblocking call and a polling wait either.
[[gnu::always_inline]] inline bool blocking_collectives_unwatched() {
  return host_only_detail::read(host_only_detail::g_unwatched_blocking_collectives);
}

}  // namespace mcrp
