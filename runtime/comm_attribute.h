// The library keeps its per-communicator state (routing facts, the NCCL communicator) in MPI
// attributes, so it is freed with the communicator. Looking one up is a base-MPI call of a few
// hundred instructions; a device call needs two (issue 15: the NCCL path must cost what NCCL costs).
// Calls on one communicator in a row, the common case, find the value in a one-entry cache per
// thread and attribute instead. Freeing any communicator's library attribute (its delete callback
// calls forget_comm_attributes) empties every cache, so a handle the base MPI reuses for a new
// communicator is looked up again. Using a communicator while another thread frees it is erroneous
// in MPI, so a cached value is never used after its communicator is gone.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>

namespace mcrp {

namespace comm_attribute_detail {
std::atomic<std::uint64_t>& generation();
}

// Call from every delete callback of an attribute read through CachedCommAttribute.
inline void forget_comm_attributes() {
  comm_attribute_detail::generation().fetch_add(1, std::memory_order_acq_rel);
}

// A new keyval for one of the library's communicator attributes, with the null copy callback (a
// duplicate gets its own value, looked up or made again). Call it to initialize a function-local
// static: after the first call that costs one load of the static's guard, where std::call_once (as
// before 2026-11-27) set two of the C++ runtime's thread-locals and called pthread_once on every
// call, about 70 instructions a lookup (cost.device_calls).
int new_comm_keyval(MPI_Comm_delete_attr_function* delete_value);

// A thread's last lookup of one attribute. Declare one thread_local instance per keyval.
class CachedCommAttribute {
 public:
  // The attribute's value on `comm`, or null when it has none (nothing is cached then). Out of line,
  // so a thread_local instance's address is computed once per lookup.
  void* find(MPI_Comm comm, int keyval);

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::uint64_t generation_ = 0;
  void* value_ = nullptr;
};

}  // namespace mcrp
