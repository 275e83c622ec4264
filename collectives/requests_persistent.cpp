#include "collectives/requests_persistent.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "collectives/errors.h"

namespace mcrp {
namespace {

struct Persistent {
  CollCall call;
  OwnedBaseCall blocking;
};

class Registry {
 public:
  void add(MPI_Request handle, std::shared_ptr<Persistent> entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[handle] = std::move(entry);
    size_.store(entries_.size(), std::memory_order_release);
  }
  // Shared ownership: a Start running in one thread survives a (erroneous) free in another.
  std::shared_ptr<Persistent> find(MPI_Request handle) {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;  // host-only programs: no lock
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(handle);
    return it == entries_.end() ? nullptr : it->second;
  }
  void erase(MPI_Request handle) {
    if (size_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(handle);
    size_.store(entries_.size(), std::memory_order_release);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<MPI_Request, std::shared_ptr<Persistent>> entries_;
  std::atomic<std::size_t> size_{0};
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: requests may be freed after exit starts
  return *instance;
}

}  // namespace

Status create_persistent(const CollCall& call, OwnedBaseCall blocking, MPI_Request* request) {
  const int rc = PMPI_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, request);
  if (rc != MPI_SUCCESS) return already_raised(rc);
  auto entry = std::make_shared<Persistent>();
  entry->call = call;
  entry->blocking = std::move(blocking);
  registry().add(*request, std::move(entry));
  return {};
}

int start_request(MPI_Request* request) {
  if (request == nullptr) return PMPI_Start(request);
  if (const std::shared_ptr<Persistent> entry = registry().find(*request)) {
    const int rc = run_collective(entry->call, BaseCall(entry->blocking));
    if (rc != MPI_SUCCESS) return rc;
  }
  return PMPI_Start(request);
}

int free_request(MPI_Request* request) {
  if (request != nullptr) registry().erase(*request);
  return PMPI_Request_free(request);
}

}  // namespace mcrp
