#include "runtime/kept_statuses.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime/persistent.h"

namespace mcrp {
namespace {

using Kept = KeptStatuses::Kept;

bool same(const Kept& a, const Kept& b) {
  return a.has_status == b.has_status && std::memcmp(&a.status, &b.status, sizeof a.status) == 0;
}

class Store {
 public:
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  bool find(MPI_Request request, Kept* kept) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = kept_.find(request);
    if (it == kept_.end()) return false;
    *kept = it->second;
    return true;
  }
  void keep(MPI_Request request, const Kept& kept) {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_[request] = kept;
    size_.store(kept_.size(), std::memory_order_release);
  }
  void forget(MPI_Request request) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.erase(request) != 0) size_.store(kept_.size(), std::memory_order_release);
  }
  // Only while it still holds `kept`: once the base MPI has freed a completed request's handle,
  // another thread's new request may have it, and what is kept for that one stays.
  void forget(MPI_Request request, const Kept& kept) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = kept_.find(request);
    if (it == kept_.end() || !same(it->second, kept)) return;
    kept_.erase(it);
    size_.store(kept_.size(), std::memory_order_release);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<MPI_Request, Kept> kept_;
  std::atomic<std::size_t> size_{0};
};

Store& store() {
  static Store* instance = new Store;  // never destroyed: requests may be completed after exit starts
  return *instance;
}

// The kept status into *status, but the completion's MPI_ERROR field.
void give_back(const MPI_Status& kept, MPI_Status* status) {
  const int error = status->MPI_ERROR;
  *status = kept;
  status->MPI_ERROR = error;
}

}  // namespace

void set_empty_status(MPI_Status* status) {
  PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
}

bool is_empty_status(const MPI_Status& status) {
  return status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG;
}

bool statuses_kept() { return !store().empty(); }

int get_status_kept(MPI_Request request, int* flag, MPI_Status* status) {
  if (request == MPI_REQUEST_NULL || flag == nullptr) return PMPI_Request_get_status(request, flag, status);
  Kept kept;
  if (!store().empty() && store().find(request, &kept)) {
    *flag = 1;
    if (kept.has_status && status != MPI_STATUS_IGNORE) give_back(kept.status, status);
    return MPI_SUCCESS;
  }
  MPI_Status ignored{};  // all zero: count 0, not cancelled (the MPICH ABI's layout)
  MPI_Status* seen = status == MPI_STATUS_IGNORE ? &ignored : status;
  // A base MPI that writes no source or tag (a send's status) leaves these: no status to keep.
  seen->MPI_SOURCE = MPI_ANY_SOURCE;
  seen->MPI_TAG = MPI_ANY_TAG;
  const int rc = PMPI_Request_get_status(request, flag, seen);
  if (rc == MPI_SUCCESS && *flag) {
    const bool registered = is_registered(request);
    const bool has_status = !registered && !is_empty_status(*seen);
    if (registered || has_status) store().keep(request, {*seen, has_status});
  }
  return rc;
}

void forget_kept_status(MPI_Request request) {
  if (!store().empty()) store().forget(request);
}

KeptStatuses::KeptStatuses(int count, const MPI_Request requests[]) {
  if (store().empty() || count <= 0 || requests == nullptr) return;
  for (int i = 0; i < count; ++i) {
    Kept kept;
    if (requests[i] != MPI_REQUEST_NULL && store().find(requests[i], &kept))
      elements_.push_back({i, requests[i], kept});
  }
}

void KeptStatuses::give(const Element& element, MPI_Status* status) {
  if (element.kept.has_status && status != MPI_STATUS_IGNORE && is_empty_status(*status)) {
    give_back(element.kept.status, status);
  }
  store().forget(element.request, element.kept);
}

void KeptStatuses::completed(int index, MPI_Status* status) {
  for (const Element& e : elements_) {
    if (e.index == index) give(e, status);
  }
}

void KeptStatuses::all_completed(MPI_Status statuses[]) {
  for (const Element& e : elements_) give(e, statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[e.index]);
}

void KeptStatuses::some_completed(const int* outcount, const int indices[], MPI_Status statuses[]) {
  if (elements_.empty() || outcount == nullptr || *outcount == MPI_UNDEFINED) return;
  for (int k = 0; k < *outcount; ++k) {
    completed(indices[k], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k]);
  }
}

int KeptStatuses::complete(const Element& element, MPI_Request requests[], CompleteOne complete_one,
                           MPI_Status* completion) {
  set_empty_status(completion);
  completion->MPI_ERROR = MPI_SUCCESS;
  const int rc = complete_one(&requests[element.index], completion);  // complete already: returns at once
  if (rc == MPI_SUCCESS) give(element, completion);
  return rc;
}

int KeptStatuses::complete_first(MPI_Request requests[], int* index, MPI_Status* status, CompleteOne complete_one) {
  MPI_Status completion;
  const int rc = complete(elements_.front(), requests, complete_one, &completion);
  if (rc != MPI_SUCCESS) return rc;
  if (status != MPI_STATUS_IGNORE) *status = completion;
  *index = elements_.front().index;
  return MPI_SUCCESS;
}

int KeptStatuses::complete_each(MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[],
                                CompleteOne complete_one) {
  int done = 0;
  for (const Element& e : elements_) {
    MPI_Status completion;
    const int rc = complete(e, requests, complete_one, &completion);
    if (rc != MPI_SUCCESS) return rc;
    if (statuses != MPI_STATUSES_IGNORE) statuses[done] = completion;
    indices[done++] = e.index;
  }
  *outcount = done;
  return MPI_SUCCESS;
}

}  // namespace mcrp
