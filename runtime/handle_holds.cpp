#include "runtime/handle_holds.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "runtime/errors.h"
#include "runtime/mpich_handles.h"

namespace mcrp {
namespace {

static_assert(std::is_same<MPI_Comm, int>::value && std::is_same<MPI_Datatype, int>::value &&
                  std::is_same<MPI_Op, int>::value,
              "the MPICH ABI's handles are ints");

struct Held {
  int holds = 0;
  bool free_pending = false;  // the program freed it: the base MPI's free comes with the last release
};

using Key = std::pair<HandleKind, int>;

struct Table {
  std::mutex mutex;  // never held across a base-MPI call: a deferred free runs attribute callbacks
  std::map<Key, Held> held;
};
// Never destroyed: a persistent request may be freed while the process exits.
Table& table() {
  static Table* instance = new Table;
  return *instance;
}
std::atomic<int> g_count{0};  // table().held.size(), read without the lock

void update_count(const Table& t) { g_count.store(static_cast<int>(t.held.size()), std::memory_order_release); }

int base_free(HandleKind kind, int handle) {
  switch (kind) {
    case HandleKind::comm: return PMPI_Comm_free(&handle);
    case HandleKind::datatype: return PMPI_Type_free(&handle);
    case HandleKind::op: return PMPI_Op_free(&handle);
  }
  return MPI_ERR_INTERN;
}

enum class HeldState { none, held, free_pending };
HeldState held_state(HandleKind kind, int handle) {
  if (g_count.load(std::memory_order_acquire) == 0) return HeldState::none;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.held.find({kind, handle});
  if (it == t.held.end()) return HeldState::none;
  return it->second.free_pending ? HeldState::free_pending : HeldState::held;
}

// What a free of `*handle` does: the base MPI's now, or nothing now (held: the last release frees it).
enum class FreeNow { base, deferred, twice };
FreeNow note_free(HandleKind kind, int handle) {
  if (g_count.load(std::memory_order_acquire) == 0) return FreeNow::base;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.held.find({kind, handle});
  if (it == t.held.end()) return FreeNow::base;
  if (it->second.free_pending) return FreeNow::twice;
  it->second.free_pending = true;
  return FreeNow::deferred;
}

// A free the base MPI would answer with "invalid handle": the object is still alive for the
// library, so the base MPI cannot be asked.
int freed_twice(const char* call, int error_class, const char* what) {
  return raise_error(MPI_COMM_WORLD, call, 0, Status(error_class, std::string(what) + " was already freed"));
}

int free_handle(HandleKind kind, int* handle, int null_handle, int (*base)(int*), const char* call, int error_class,
                const char* what) {
  if (handle == nullptr) return base(handle);
  switch (note_free(kind, *handle)) {
    case FreeNow::base: return base(handle);
    case FreeNow::twice: return freed_twice(call, error_class, what);
    case FreeNow::deferred: break;
  }
  *handle = null_handle;
  return MPI_SUCCESS;
}

}  // namespace

HandleHolds& HandleHolds::operator=(HandleHolds&& other) noexcept {
  if (this != &other) {
    release();
    held_ = std::move(other.held_);
    other.held_.clear();
  }
  return *this;
}

HandleHolds HandleHolds::of(MPI_Comm comm, std::initializer_list<MPI_Datatype> types, MPI_Op op) {
  HandleHolds holds;
  holds.hold_comm(comm);
  for (const MPI_Datatype type : types) holds.hold_datatype(type);
  holds.hold_op(op);
  return holds;
}

void HandleHolds::hold_comm(MPI_Comm comm) { hold(HandleKind::comm, comm); }
void HandleHolds::hold_datatype(MPI_Datatype type) { hold(HandleKind::datatype, type); }
void HandleHolds::hold_op(MPI_Op op) { hold(HandleKind::op, op); }

void HandleHolds::hold(HandleKind kind, int handle) {
  // Null handles (storage bits 0) and the builtin objects (1) cannot be freed by the program.
  if ((handle_bits(handle) >> 30) <= 1u) return;
  for (const auto& held : held_)
    if (held.first == kind && held.second == handle) return;  // one hold per operation and handle
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  ++t.held[{kind, handle}].holds;
  update_count(t);
  held_.emplace_back(kind, handle);
}

bool HandleHolds::forget_disconnected(MPI_Comm comm) {
  const Key key{HandleKind::comm, comm};
  const auto mine = std::find(held_.begin(), held_.end(), key);
  if (mine == held_.end()) return false;
  held_.erase(mine);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.held.find(key);
  if (it != t.held.end() && --it->second.holds == 0) {
    t.held.erase(it);  // no base free: the disconnect was it
    update_count(t);
  }
  return true;
}

void HandleHolds::release() {
  for (const auto& [kind, handle] : held_) {
    bool free_now = false;
    {
      Table& t = table();
      std::lock_guard<std::mutex> lock(t.mutex);
      const auto it = t.held.find({kind, handle});
      if (it == t.held.end()) continue;
      if (--it->second.holds == 0) {
        free_now = it->second.free_pending;
        t.held.erase(it);
        update_count(t);
      }
    }
    if (free_now) base_free(kind, handle);  // the program's free, put off until now
  }
  held_.clear();
}

int free_comm(MPI_Comm* comm) {
  return free_handle(HandleKind::comm, comm, MPI_COMM_NULL, PMPI_Comm_free, "MPI_Comm_free", MPI_ERR_COMM,
                     "the communicator");
}

int check_not_freed(MPI_Comm comm, const char* call) {
  return held_state(HandleKind::comm, comm) == HeldState::free_pending
             ? freed_twice(call, MPI_ERR_COMM, "the communicator")
             : MPI_SUCCESS;
}

int free_datatype(MPI_Datatype* type) {
  // A predefined datatype stored apart from the builtin ones (MPI_FLOAT_INT and the other pair
  // types) may be held; freeing it is the base MPI's error to report.
  if (type != nullptr && held_state(HandleKind::datatype, *type) != HeldState::none) {
    int integers = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(*type, &integers, &addresses, &datatypes, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return PMPI_Type_free(type);
  }
  return free_handle(HandleKind::datatype, type, MPI_DATATYPE_NULL, PMPI_Type_free, "MPI_Type_free", MPI_ERR_TYPE,
                     "the datatype");
}

int free_op(MPI_Op* op) {
  return free_handle(HandleKind::op, op, MPI_OP_NULL, PMPI_Op_free, "MPI_Op_free", MPI_ERR_OP, "the op");
}

}  // namespace mcrp

extern "C" int mcrpmpi_held_handle_count() { return mcrp::g_count.load(std::memory_order_acquire); }
