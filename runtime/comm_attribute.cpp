#include "runtime/comm_attribute.h"

namespace mcrp {
namespace comm_attribute_detail {

std::atomic<std::uint64_t>& generation() {
  static std::atomic<std::uint64_t> value{1};  // caches start at 0: never current
  return value;
}

}  // namespace comm_attribute_detail

int new_comm_keyval(MPI_Comm_delete_attr_function* delete_value) {
  int keyval = MPI_KEYVAL_INVALID;
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_value, &keyval, nullptr);
  return keyval;
}

void* CachedCommAttribute::find(MPI_Comm comm, int keyval) {
  const std::uint64_t now = comm_attribute_detail::generation().load(std::memory_order_acquire);
  if (comm_ == comm && generation_ == now) return value_;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &value, &found);
  if (!found) return nullptr;
  comm_ = comm;
  generation_ = now;  // read before the lookup: a deletion since then makes the next call look again
  value_ = value;
  return value;
}

}  // namespace mcrp
