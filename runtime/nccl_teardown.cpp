#include "runtime/nccl_teardown.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "device/handles.h"
#include "runtime/config.h"
#include "runtime/launch_lock.h"
#include "runtime/nccl_api.h"
#include "runtime/nccl_comm.h"
#include "runtime/progress.h"

namespace mcrp {
namespace {

struct Retired {
  ncclComm_t handle;
  int device;
  bool abort;
};

std::mutex g_retired_mutex;
std::vector<Retired> g_retired;
std::atomic<int> g_retired_count{0};

std::vector<Retired> take_retired() {
  std::vector<Retired> taken;
  std::lock_guard<std::mutex> lock(g_retired_mutex);
  taken.swap(g_retired);
  g_retired_count.store(0, std::memory_order_release);
  return taken;
}

// Finalize, then destroy; abort when finalizing fails or outlasts the NCCL timeout. Finalizing an
// idle communicator is local (nothing of it is in flight), so it is polled without MPI progress:
// the caller holds the launch lock, which progress could need.
void tear_down(const Retired& retired) {
  const NcclApi* nccl = nccl_api();
  device::DeviceGuard guard(retired.device);
  if (retired.abort) {
    nccl->CommAbort(retired.handle);
    return;
  }
  const double timeout = config().nccl_timeout_s > 0 ? config().nccl_timeout_s : 600;
  const auto deadline = deadline_after(timeout);
  ncclResult_t state = nccl->CommFinalize(retired.handle);
  while (state == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
    sched_yield();
    if (nccl->CommGetAsyncError(retired.handle, &state) != ncclSuccess) state = ncclInternalError;
  }
  if (state != ncclSuccess) {
    nccl->CommAbort(retired.handle);
    return;
  }
  nccl->CommDestroy(retired.handle);
}

void abort_all(const std::vector<Retired>& retired) {
  for (const Retired& r : retired) tear_down(Retired{r.handle, r.device, true});
}

}  // namespace

void retire_nccl_handle(ncclComm_t handle, int device, bool abort) {
  if (handle == nullptr || nccl_api() == nullptr) return;
  std::lock_guard<std::mutex> lock(g_retired_mutex);
  g_retired.push_back(Retired{handle, device, abort});
  g_retired_count.store(static_cast<int>(g_retired.size()), std::memory_order_release);
}

bool run_if_nccl_quiet(const std::function<void()>& work) {
  // No launch starts while this is held (every NCCL launch takes it), and none was under way.
  NcclLaunchLock launch(std::try_to_lock);
  if (!launch.owns_lock() || nccl_work_in_flight()) return false;
  work();
  return true;
}

void tear_down_retired_when_quiet() {
  if (g_retired_count.load(std::memory_order_acquire) == 0) return;
  run_if_nccl_quiet([] {
    for (const Retired& retired : take_retired()) tear_down(retired);
  });
}

void tear_down_all_retired() {
  // Fails only at its MCRPMPI_NCCL_TIMEOUT deadline (none when 0).
  MpiProgress progress("retired NCCL communicators to be torn down");
  while (g_retired_count.load(std::memory_order_acquire) != 0) {
    tear_down_retired_when_quiet();
    if (g_retired_count.load(std::memory_order_acquire) == 0) return;
    if (!progress.poll().ok()) {
      abort_all(take_retired());  // NCCL work that never ended: nothing left to wait for
      return;
    }
  }
}

}  // namespace mcrp

extern "C" int mcrpmpi_retired_nccl_comms() { return mcrp::g_retired_count.load(std::memory_order_acquire); }
