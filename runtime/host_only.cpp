#include "runtime/host_only.h"

#include "device/cuda_runtime.h"
#include "runtime/config.h"
#include "runtime/profile.h"

namespace mcrp::host_only_detail {

std::atomic<std::int8_t> g_process{kUnsettled}, g_blocking_collectives{kUnsettled}, g_unwatched{kUnsettled},
    g_unwatched_blocking_collectives{kUnsettled};

bool settle(const std::atomic<std::int8_t>* asked) {
  const Config& settings = config();
  const bool unwatched = !profile::enabled() && !settings.verify && !settings.stats;
  const bool process = unwatched && !device::cuda_available();
  const struct {
    std::atomic<std::int8_t>* answer;
    bool direct;
  } answers[] = {{&g_process, process},
                 {&g_blocking_collectives, process && !settings.polling_collectives},
                 {&g_unwatched, unwatched},
                 {&g_unwatched_blocking_collectives, unwatched && !settings.polling_collectives}};
  bool result = false;
  for (const auto& a : answers) {
    // Threads racing here compute the same answers.
    a.answer->store(a.direct ? kDirect : kRouted, std::memory_order_relaxed);
    if (a.answer == asked) result = a.direct;
  }
  return result;
}

}  // namespace mcrp::host_only_detail
