#include "tests/fake_nccl/device_model.h"

#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "tests/fake_nccl/fake_comm.h"

namespace fake_nccl::device_model {
namespace {

std::shared_mutex g_context_lock;  // the CUDA context's lock
std::mutex g_comms_mutex;
std::set<Comm*> g_comms;
std::map<cudaStream_t, Comm*> g_stream_owner;  // under g_comms_mutex

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
  for (auto it = g_stream_owner.begin(); it != g_stream_owner.end();) {
    it = it->second == comm ? g_stream_owner.erase(it) : std::next(it);
  }
}

Launch::Launch() { g_context_lock.lock_shared(); }
Launch::~Launch() { g_context_lock.unlock_shared(); }

void enter_context() { g_context_lock.lock_shared(); }
void leave_context() { g_context_lock.unlock_shared(); }

void synchronize_device() {
  std::unique_lock<std::shared_mutex> context(g_context_lock);
  while (!everything_idle()) usleep(100);
}

void wait_for_earlier_work() {
  std::vector<std::pair<Comm*, std::uint64_t>> marks;
  {
    std::lock_guard<std::mutex> lock(g_comms_mutex);
    for (Comm* comm : g_comms) marks.emplace_back(comm, comm->submitted());
  }
  for (const auto& [comm, mark] : marks) {
    for (;;) {
      {
        // Under the list's lock: a communicator destroyed meanwhile has nothing left to wait for.
        std::lock_guard<std::mutex> lock(g_comms_mutex);
        if (g_comms.count(comm) == 0 || comm->done_through(mark)) break;
      }
      usleep(100);
    }
  }
}

void note_stream(cudaStream_t stream, Comm* comm) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  g_stream_owner[stream] = comm;
}

std::uint64_t stream_mark(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  auto owner = g_stream_owner.find(stream);
  return owner == g_stream_owner.end() ? 0 : owner->second->submitted();
}

// Under the list's lock rather than holding a Comm: an abort may delete it meanwhile.
bool stream_reached(cudaStream_t stream, std::uint64_t mark) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  auto owner = g_stream_owner.find(stream);
  return owner == g_stream_owner.end() || owner->second->done_through(mark);
}

bool run_after(cudaStream_t stream, void (*run)(void*), void* arg) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  auto owner = g_stream_owner.find(stream);
  if (owner == g_stream_owner.end() || owner->second->done_through(owner->second->submitted())) return false;
  Work copy;
  copy.finishes.push_back([run, arg] { run(arg); });
  return owner->second->submit(std::move(copy)) == ncclSuccess;
}

void wait_for_stream(cudaStream_t stream) {
  const std::uint64_t mark = stream_mark(stream);
  while (!stream_reached(stream, mark)) usleep(100);
}

}  // namespace fake_nccl::device_model
