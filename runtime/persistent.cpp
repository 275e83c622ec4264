#include "runtime/persistent.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/errors.h"
#include "runtime/kept_statuses.h"
#include "runtime/profile.h"
#include "runtime/requests.h"
#include "runtime/self_comm.h"

namespace mcrp {

struct PersistentEntry {
  PersistentStart start;                 // set when the library runs the operation (device buffers)
  FreeActive on_free = FreeActive::finish;
  std::shared_ptr<PersistentAttachment> attachment;  // set once, before the entry is registered
  MPI_Comm base_comm = MPI_COMM_NULL;    // a base MPI's own request: its communicator
  std::mutex mutex;                      // the fields below change in any thread that waits on the handle
  HandleHolds holds;                     // what `start` passes to the base MPI, valid until the entry goes
  bool disconnected = false;             // `start`'s communicator went with MPI_Comm_disconnect (holds dropped it)
  MPI_Request inner = MPI_REQUEST_NULL;  // the started operation, until it has completed
  MPI_Status status{};                   // the inner request's status, once it has completed
  int error = MPI_SUCCESS;               // the inner request's error: the round's, which the handle reports
  bool active = false;                   // started, and not yet completed by the base MPI
};

namespace {

std::atomic<int> g_in_flight{0};  // registered handles whose inner request is not yet complete

// Completes or tests `entry`'s inner request; `wait` blocks. A failure is the round's error, which
// the handle reports when the base MPI completes it (mark_completed): not earlier, since a Wait/Test
// call over several requests must report it with the handle's completion, in its status.
void settle_inner(PersistentEntry& entry, bool wait, bool* running) {
  std::lock_guard<std::mutex> lock(entry.mutex);
  *running = false;
  if (entry.inner == MPI_REQUEST_NULL) return;
  int done = 1;
  const int rc = wait ? PMPI_Wait(&entry.inner, &entry.status) : PMPI_Test(&entry.inner, &done, &entry.status);
  if (rc != MPI_SUCCESS || done) {
    entry.inner = MPI_REQUEST_NULL;  // completed (an erroneous one is freed by the base MPI too)
    entry.error = rc;
    g_in_flight.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  *running = true;
}

class Registry {
 public:
  void add(MPI_Request handle, std::shared_ptr<PersistentEntry> entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[handle] = std::move(entry);
    size_.store(entries_.size(), std::memory_order_release);
  }
  // Shared ownership: a Start running in one thread survives a (erroneous) free in another.
  std::shared_ptr<PersistentEntry> find(MPI_Request handle) {
    if (size_.load(std::memory_order_acquire) == 0) return nullptr;  // host-only programs: no lock
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(handle);
    return it == entries_.end() ? nullptr : it->second;
  }
  std::size_t size() const { return size_.load(std::memory_order_acquire); }
  // Every entry, each given once (with its handle) to `visit` without the registry's lock held.
  template <typename Visit>
  void for_each(Visit visit) {
    std::vector<std::pair<MPI_Request, std::shared_ptr<PersistentEntry>>> entries;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entries.assign(entries_.begin(), entries_.end());
    }
    for (auto& [handle, entry] : entries) visit(handle, entry);
  }
  // `expected` non-null: only while the handle still names that entry (the base MPI may have freed
  // the handle and given it to another thread's new request, registered since).
  void erase(MPI_Request handle, const PersistentEntry* expected = nullptr) {
    if (size_.load(std::memory_order_acquire) == 0) return;
    // Destroyed after the lock is released: releasing the entry's holds may free a communicator,
    // whose attribute delete callbacks call MPI.
    std::shared_ptr<PersistentEntry> removed;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(handle);
    if (it == entries_.end() || (expected != nullptr && it->second.get() != expected)) return;
    removed = std::move(it->second);
    entries_.erase(it);
    size_.store(entries_.size(), std::memory_order_release);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<MPI_Request, std::shared_ptr<PersistentEntry>> entries_;
  std::atomic<std::size_t> size_{0};
};

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: requests may be freed after exit starts
  return *instance;
}

}  // namespace

Status create_persistent(PersistentStart start, HandleHolds holds, MPI_Request* request, FreeActive on_free,
                         std::shared_ptr<PersistentAttachment> attachment) {
  profile::StepTimer making_request(profile::Step::finish);  // as start_generalized's
  const MPI_Comm self = library_self_comm();
  if (self == MPI_COMM_NULL) return Status(MPI_ERR_OTHER, "MPI is not initialized");
  const int rc = PMPI_Barrier_init(self, MPI_INFO_NULL, request);
  MCRP_TRY(from_base(rc));
  auto entry = std::make_shared<PersistentEntry>();
  entry->start = std::move(start);
  entry->holds = std::move(holds);
  entry->on_free = on_free;
  entry->attachment = std::move(attachment);
  registry().add(*request, std::move(entry));
  return {};
}

void register_base_persistent(MPI_Request request, MPI_Comm comm) {
  if (request == MPI_REQUEST_NULL) return;
  auto entry = std::make_shared<PersistentEntry>();
  entry->base_comm = comm;
  registry().add(request, std::move(entry));
}

int start_request(MPI_Request* request) {
  if (request == nullptr) return PMPI_Start(request);
  forget_kept_status(*request);  // a new round
  const std::shared_ptr<PersistentEntry> entry = registry().find(*request);
  if (!entry) return PMPI_Start(request);
  std::lock_guard<std::mutex> lock(entry->mutex);
  if (entry->disconnected) {
    return raise_error(MPI_COMM_WORLD, "MPI_Start", 0,
                       Status(MPI_ERR_REQUEST, "the request's communicator was disconnected (MPI_Comm_disconnect)"));
  }
  if (entry->start) {
    set_empty_status(&entry->status);  // what a round that completes at once reports
    entry->error = MPI_SUCCESS;
    const int rc = entry->start(&entry->inner);
    if (rc != MPI_SUCCESS) return rc;
    if (entry->inner != MPI_REQUEST_NULL) g_in_flight.fetch_add(1, std::memory_order_acq_rel);
  }
  const int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) entry->active = true;
  return rc;
}

int cancel_request(MPI_Request* request) {
  const std::shared_ptr<PersistentEntry> entry = request != nullptr ? registry().find(*request) : nullptr;
  if (!entry || !entry->start) return PMPI_Cancel(request);
  std::lock_guard<std::mutex> lock(entry->mutex);
  // Inactive, or its operation already completed: MPI says the cancel then has no effect.
  return entry->inner == MPI_REQUEST_NULL ? MPI_SUCCESS : PMPI_Cancel(&entry->inner);
}

namespace {

// An active point-to-point operation outlives its freed handle: its inner request is freed too, so
// it completes on its own (a library operation through the live list, runtime/requests.h, at the
// latest in MPI_Finalize; a base-MPI request as the base MPI finishes freed requests).
void detach_inner(PersistentEntry& entry) {
  std::lock_guard<std::mutex> lock(entry.mutex);
  if (entry.inner == MPI_REQUEST_NULL) return;
  note_freed(entry.inner);
  PMPI_Request_free(&entry.inner);
  g_in_flight.fetch_sub(1, std::memory_order_acq_rel);
}

// Completes a started placeholder (a barrier on the library's communicator of this process alone,
// runtime/self_comm.h), which is local and immediate.
void complete_placeholder(MPI_Request handle, PersistentEntry& entry) {
  std::lock_guard<std::mutex> lock(entry.mutex);
  if (!entry.start || !entry.active) return;
  PMPI_Wait(&handle, MPI_STATUS_IGNORE);
  entry.active = false;
}

}  // namespace

int free_request(MPI_Request* request) {
  if (request != nullptr) {
    forget_kept_status(*request);  // the base MPI may give the handle to a new request
    const std::shared_ptr<PersistentEntry> entry = registry().find(*request);
    if (entry && entry->on_free == FreeActive::detach) {
      detach_inner(*entry);
    } else {
      // A collective's buffers are the user's: finish it here rather than leave it running unseen.
      wait_device_work(*request);
    }
    // The handle of a library operation is a started barrier on the library's own communicator,
    // complete at once: completed here, so that the base MPI frees an inactive request. The mpich
    // 5.0.2 and Intel MPI 2021.18 wheels crash in the next MPI_Start of such a request after one
    // was freed while active (test_p2p_requests --section free-persistent).
    if (entry) {
      complete_placeholder(*request, *entry);
      registry().erase(*request);
    } else {
      note_freed(*request);  // a library operation's own request, perhaps
    }
  }
  return PMPI_Request_free(request);
}

void comm_disconnected(MPI_Comm comm) {
  if (registry().size() == 0) return;
  std::vector<std::pair<MPI_Request, PersistentRef>> gone;  // refs: no entry's address is reused meanwhile
  registry().for_each([comm, &gone](MPI_Request handle, const PersistentRef& entry) {
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->start && entry->holds.forget_disconnected(comm)) entry->disconnected = true;
    if (!entry->start && entry->base_comm == comm) gone.emplace_back(handle, entry);
  });
  for (const auto& [handle, entry] : gone) registry().erase(handle, entry.get());
}

bool is_registered(MPI_Request handle) { return registry().find(handle) != nullptr; }

bool persistent_requests_exist() { return registry().size() > 0; }

bool device_work_in_flight() { return g_in_flight.load(std::memory_order_acquire) > 0; }

PersistentRef find_persistent(MPI_Request handle) { return registry().find(handle); }

std::shared_ptr<PersistentAttachment> persistent_attachment(MPI_Request handle) {
  const PersistentRef entry = registry().find(handle);
  return entry ? entry->attachment : nullptr;
}

void hide_from_base(const PersistentRef& entry, bool* hide, bool* running) {
  *hide = *running = false;
  if (!entry) return;
  settle_inner(*entry, false, running);
  std::lock_guard<std::mutex> lock(entry->mutex);
  *hide = *running || !entry->active;
}

namespace {

// An inactive handle's status is the empty one, not its last round's.
void copy_status(const PersistentEntry& entry, MPI_Status* status) {
  if (!entry.start || !entry.active || status == MPI_STATUS_IGNORE) return;
  const int error = status->MPI_ERROR;  // the base MPI's, for this handle
  *status = entry.status;
  status->MPI_ERROR = error;
}

}  // namespace

int mark_completed(const PersistentRef& entry, MPI_Status* status) {
  if (!entry) return MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(entry->mutex);
  copy_status(*entry, status);
  const int error = entry->active ? entry->error : MPI_SUCCESS;
  entry->active = false;
  entry->error = MPI_SUCCESS;
  return error;
}

bool report_inactive(const PersistentRef& entry, MPI_Status* status) {
  if (!entry) return false;
  std::lock_guard<std::mutex> lock(entry->mutex);
  if (entry->active) return false;
  if (status != MPI_STATUS_IGNORE) {
    set_empty_status(status);
    status->MPI_ERROR = MPI_SUCCESS;
  }
  return true;
}

int report_status(const PersistentRef& entry, MPI_Status* status) {
  if (!entry) return MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(entry->mutex);
  copy_status(*entry, status);
  return entry->active ? entry->error : MPI_SUCCESS;
}

void test_device_work(const PersistentRef& entry, bool* running) {
  *running = false;
  if (entry && device_work_in_flight()) settle_inner(*entry, false, running);
}

void wait_device_work(const PersistentRef& entry) {
  bool running = false;
  if (entry && device_work_in_flight()) settle_inner(*entry, true, &running);
}

void wait_device_work(MPI_Request handle) {
  if (device_work_in_flight()) wait_device_work(find_persistent(handle));
}

}  // namespace mcrp
