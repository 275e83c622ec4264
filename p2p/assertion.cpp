#include "p2p/assertion.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "p2p/engine.h"
#include "runtime/comm_attribute.h"
#include "runtime/comm_facts.h"
#include "runtime/config.h"
#include "runtime/memory_alloc_kinds.h"

namespace mcrp {
namespace {

constexpr const char* kDeviceOnly = "cuda:device";  // the one value of the key that asserts it

std::atomic<int> g_engines{0};  // communicators that ever got one: engine_of's fast path

struct Attached {
  std::shared_ptr<Engine> engine;
};

int delete_attached(MPI_Comm, int, void* value, void*) {
  delete static_cast<Attached*>(value);  // in-flight operations keep the engine alive
  forget_comm_attributes();
  return MPI_SUCCESS;
}

// A duplicate is asserted (or not) by its own info.
int keyval() {
  static const int key = new_comm_keyval(delete_attached);
  return key;
}

// The channel for `comm`, decided alike on every rank; nullptr when none.
const char* channel_for(MPI_Comm comm) {
  const char* setting = std::getenv("MCRPMPI_P2P_CHANNEL");
  const std::string choice = setting != nullptr && setting[0] != '\0' ? setting : "auto";
  if (choice == "mpi") return "mpi";
  if (choice == "nccl") return "nccl";
  if (choice != "auto") {
    std::fprintf(stderr, "mcrpmpi: MCRPMPI_P2P_CHANNEL=%s is not auto, nccl or mpi; using auto\n", choice.c_str());
  }
  if (device::fake_device()) return nullptr;
  return comm_facts(comm).nccl_everywhere ? "nccl" : nullptr;
}

// Rank 0's channel for every rank: MCRPMPI_P2P_CHANNEL is read by each process, and ranks on
// different channels would each wait for payloads the other sends elsewhere (rule 1). Called by every
// member, right after the assertion was found to hold on all of them.
const char* agreed_channel(MPI_Comm comm) {
  static const char* const kChannels[] = {nullptr, "mpi", "nccl"};
  const char* mine = channel_for(comm);
  int code = mine == nullptr ? 0 : std::strcmp(mine, "mpi") == 0 ? 1 : 2;
  PMPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return kChannels[code];
}

int current_device() {
  int device = 0;
  if (!device::fake_device() && cudaGetDevice(&device) != cudaSuccess) device = 0;
  return device;
}

}  // namespace

bool info_asserts_device_only(MPI_Info info) {
  std::string value;
  return info != MPI_INFO_NULL && info_value(info, kAssertMemoryAllocKindsKey, &value) && value == kDeviceOnly;
}

int report_device_only_assertion(MPI_Comm comm, MPI_Info info) {
  return engine_of(comm) ? PMPI_Info_set(info, kAssertMemoryAllocKindsKey, kDeviceOnly) : MPI_SUCCESS;
}

bool device_only_everywhere() { return config().p2p_device_only; }

void assert_device_only(MPI_Comm comm, bool asserted_here) {
  if (comm == MPI_COMM_NULL) return;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return;
  // Whether to agree at all is decided from the WORLD map, alike on every member: a rank without
  // CUDA (a CPU-only node, MCRPMPI_DISABLE_CUDA=1) among ranks with it would otherwise skip the
  // allreduce they enter, and hang them in every MPI_Comm_split_type. Such a communicator, and
  // any of a Sessions-only program (no map), is never asserted. A rank without CUDA knows that
  // answer without the map (the map says the same to every member).
  if (!device::cuda_available() || !comm_facts(comm).cuda_everywhere) return;
  int mine = asserted_here ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all || engine_of(comm)) return;
  const char* channel = agreed_channel(comm);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (channel == nullptr) {
    if (config().debug && rank == 0) {
      std::fprintf(stderr, "mcrpmpi: device-only assertion noted; NCCL is not usable on every member, so "
                           "point-to-point stays on the staged path\n");
    }
    return;
  }
  std::shared_ptr<Engine> engine = Engine::create(comm, channel, current_device());
  if (!engine) return;  // every rank failed alike only if the dup did; then all stay staged
  PMPI_Comm_set_attr(comm, keyval(), new Attached{engine});
  g_engines.fetch_add(1, std::memory_order_acq_rel);
  if (config().debug && rank == 0) {
    std::fprintf(stderr, "mcrpmpi: communicator asserted device-only: point-to-point on the %s channel, "
                         "payloads above %zu B by rendezvous\n", engine->channel_name(), engine->eager_limit());
  }
}

bool engines_exist() { return g_engines.load(std::memory_order_acquire) != 0; }

std::shared_ptr<Engine> engine_of(MPI_Comm comm) {
  if (!engines_exist() || comm == MPI_COMM_NULL) return nullptr;
  // Calls on one asserted communicator in a row find it in the thread's cache: a base-MPI lookup
  // costs about 130 instructions through the library's binding (cost.device_p2p_calls).
  thread_local CachedCommAttribute cached;
  void* value = cached.find(comm, keyval());
  return value != nullptr ? static_cast<Attached*>(value)->engine : nullptr;
}

void finish_p2p() {
  if (g_engines.load(std::memory_order_acquire) == 0) return;
  int found = 0;
  void* value = nullptr;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval(), &value, &found);
  if (found) PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval());
  Engine::shutdown_all();
}

}  // namespace mcrp

extern "C" long long mcrpmpi_p2p_engine_eager_limit(MPI_Comm comm) {
  const std::shared_ptr<mcrp::Engine> engine = mcrp::engine_of(comm);
  return engine ? static_cast<long long>(engine->eager_limit()) : -1;
}
