#include "collectives/nccl_comm.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "collectives/config.h"
#include "collectives/nccl_api.h"
#include "collectives/progress.h"
#include "device/cuda_runtime.h"

namespace mcrp {
namespace {

// What the attribute holds: the communicator, or the agreed verdict that NCCL cannot serve it.
struct CommEntry {
  NcclComm* nccl = nullptr;  // owned; null when unusable
};

int delete_entry(MPI_Comm, int, void* value, void*) {
  auto* entry = static_cast<CommEntry*>(value);
  delete entry->nccl;
  delete entry;
  return MPI_SUCCESS;
}

int g_keyval = MPI_KEYVAL_INVALID;

int keyval() {
  static std::once_flag once;
  // The copy callback is the null one: a duplicated communicator gets its own NCCL communicator.
  std::call_once(once, [] { PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &g_keyval, nullptr); });
  return g_keyval;
}

// Polls a nonblocking NCCL communicator until its pending operation leaves ncclInProgress.
Status wait_not_in_progress(ncclComm_t comm, const char* what) {
  const NcclApi* nccl = nccl_api();
  MpiProgress progress;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = nccl->CommGetAsyncError(comm, &state);
    if (rc != ncclSuccess) state = rc;
    if (state == ncclSuccess) return {};
    if (state != ncclInProgress) {
      return Status(MPI_ERR_OTHER, std::string(what) + ": " + nccl->GetErrorString(state) + " (" +
                                       nccl->GetLastError(comm) + ")");
    }
    MCRP_TRY(progress.poll());
  }
}

bool all_agree(bool local_ok, MPI_Comm comm) {
  int ok = local_ok ? 1 : 0;
  int all = 0;
  if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return false;
  return all == 1;
}

void log_debug(const char* what, int rank, int size, const std::string& detail) {
  if (config().debug) std::fprintf(stderr, "mcrpmpi[%d/%d]: %s%s\n", rank, size, what, detail.c_str());
}

// The collective part: agree that everyone can use NCCL, share the unique id, initialise.
Status create(MPI_Comm comm, int device, CommEntry* entry) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const NcclApi* nccl = nccl_api();
  if (!all_agree(nccl != nullptr && device >= 0, comm)) {
    log_debug("NCCL unusable on this communicator: ", rank, size,
              nccl == nullptr ? nccl_load_error() : "a rank lacks NCCL or a device");
    return {};
  }
  struct {
    int ok;
    ncclUniqueId id;
  } shared{};
  if (rank == 0) shared.ok = nccl->GetUniqueId(&shared.id) == ncclSuccess ? 1 : 0;
  PMPI_Bcast(&shared, sizeof shared, MPI_BYTE, 0, comm);
  if (!shared.ok) return {};

  auto made = new NcclComm;
  made->device = device;
  made->size = size;
  made->rank = rank;
  Status status;
  {
    device::DeviceGuard guard(device);
    ncclConfig_t nccl_config = NCCL_CONFIG_INITIALIZER;
    nccl_config.blocking = 0;
    ncclResult_t rc;
    {
      // Only the call is serialized: holding the lock while polling the (collective) initialisation
      // would let two threads creating communicators in different orders on two ranks deadlock.
      std::lock_guard<std::mutex> lock(nccl_launch_mutex());
      rc = nccl->CommInitRankConfig(&made->handle, size, shared.id, rank, &nccl_config);
    }
    if (rc == ncclInProgress || rc == ncclSuccess) {
      status = wait_not_in_progress(made->handle, "ncclCommInitRankConfig");
    } else {
      status = Status(MPI_ERR_OTHER, std::string("ncclCommInitRankConfig: ") + nccl->GetErrorString(rc));
    }
    if (status.ok()) status = device::create_ordered_stream(made->stream);
  }
  if (!all_agree(status.ok(), comm)) {
    log_debug("NCCL initialisation failed; using the staged path: ", rank, size,
              status.ok() ? "on another rank" : status.message());
    made->broken = true;  // abort rather than destroy: peers may not have finished initialising
    delete made;
    return {};
  }
  entry->nccl = made;
  log_debug("created NCCL communicator on device ", rank, size, std::to_string(device));
  return {};
}

}  // namespace

NcclComm::~NcclComm() {
  const NcclApi* nccl = nccl_api();
  if (handle == nullptr || nccl == nullptr) return;
  device::DeviceGuard guard(device);
  if (broken) {
    nccl->CommAbort(handle);
    return;
  }
  // Nonblocking communicators finalize asynchronously: flush outstanding work before destroying.
  const ncclResult_t finalized = nccl->CommFinalize(handle);
  if (finalized != ncclSuccess && finalized != ncclInProgress) {
    nccl->CommAbort(handle);
    return;
  }
  if (!wait_not_in_progress(handle, "ncclCommFinalize").ok()) {
    nccl->CommAbort(handle);
    return;
  }
  nccl->CommDestroy(handle);
}

std::mutex& nccl_launch_mutex() {
  static std::mutex mutex;
  return mutex;
}

Status nccl_comm_for(MPI_Comm comm, int device, NcclComm** out) {
  *out = nullptr;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval(), &value, &found);
  if (!found) {
    auto* entry = new CommEntry;
    MCRP_TRY(create(comm, device, entry));
    PMPI_Comm_set_attr(comm, keyval(), entry);
    value = entry;
  }
  NcclComm* nccl = static_cast<CommEntry*>(value)->nccl;
  if (nccl != nullptr && nccl->broken) {
    return Status(MPI_ERR_OTHER, "the NCCL communicator was aborted after an earlier failure");
  }
  if (nccl != nullptr && nccl->device != device) {
    return Status(MPI_ERR_BUFFER, "buffer is on CUDA device " + std::to_string(device) +
                                      " but this communicator's NCCL communicator is on device " +
                                      std::to_string(nccl->device));
  }
  *out = nccl;
  return {};
}

Status settle(NcclComm& comm, ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return {};
  if (result == ncclInProgress) return wait_not_in_progress(comm.handle, what);
  const NcclApi* nccl = nccl_api();
  return Status(MPI_ERR_OTHER, std::string(what) + ": " + nccl->GetErrorString(result) + " (" +
                                   nccl->GetLastError(comm.handle) + ")");
}

void release_world_nccl_comm() {
  static bool released = false;
  if (released || g_keyval == MPI_KEYVAL_INVALID) return;  // no NCCL communicator was ever made
  released = true;
  int found = 0;
  void* value = nullptr;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval(), &value, &found);
  if (found) PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval());
}

}  // namespace mcrp
