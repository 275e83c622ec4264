#include "tests/fake_nccl/device_model.h"

#include <unistd.h>

#include <mutex>
#include <set>

#include "tests/fake_nccl/fake_comm.h"

namespace fake_nccl::device_model {
namespace {

std::shared_mutex g_context_lock;  // the CUDA context's lock
std::mutex g_comms_mutex;
std::set<Comm*> g_comms;

bool everything_idle() {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  for (Comm* comm : g_comms) {
    if (!comm->idle()) return false;
  }
  return true;
}

}  // namespace

void add(Comm* comm) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  g_comms.insert(comm);
}

void remove(Comm* comm) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  g_comms.erase(comm);
}

Launch::Launch() { g_context_lock.lock_shared(); }
Launch::~Launch() { g_context_lock.unlock_shared(); }

void synchronize_device() {
  std::unique_lock<std::shared_mutex> context(g_context_lock);
  while (!everything_idle()) usleep(100);
}

}  // namespace fake_nccl::device_model
