#include "runtime/buffer.h"

#include <algorithm>
#include <atomic>

#include "runtime/errors.h"
#include "runtime/mpich_handles.h"

namespace mcrp {
namespace {

Status query_type_info(MPI_Datatype type, TypeInfo* info) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int rc = PMPI_Type_size_x(type, &info->size);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_extent_x(type, &lb, &extent);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "invalid datatype");
  info->extent = extent;
  info->true_lb = true_lb;
  info->true_extent = true_extent;
  return {};
}

// Predefined datatypes never change, so their geometry is asked for once per process: every device
// call queries one or two of them, three base-MPI calls each (issue 15: the library's own cost per
// call). Slots are indexed by the handle's low byte (the MPICH ABI numbers predefined types there)
// and keep the whole handle, so a type sharing a slot with another is simply queried each time.
// Lock-free: a slot is claimed once (empty -> filling), written, then published (ready).
class BuiltinTypeCache {
 public:
  bool find(MPI_Datatype type, TypeInfo* info) const {
    const Slot& slot = slots_[index(type)];
    if (slot.state.load(std::memory_order_acquire) != kReady || slot.handle != type) return false;
    *info = slot.info;
    return true;
  }
  void remember(MPI_Datatype type, const TypeInfo& info) {
    Slot& slot = slots_[index(type)];
    int empty = kEmpty;
    if (!slot.state.compare_exchange_strong(empty, kFilling, std::memory_order_acq_rel)) return;
    slot.handle = type;
    slot.info = info;
    slot.state.store(kReady, std::memory_order_release);
  }

 private:
  static constexpr int kEmpty = 0, kFilling = 1, kReady = 2;
  struct Slot {
    std::atomic<int> state{kEmpty};
    MPI_Datatype handle = MPI_DATATYPE_NULL;
    TypeInfo info;
  };
  static std::size_t index(MPI_Datatype type) { return handle_bits(type) & 0xffu; }
  Slot slots_[256];
};

BuiltinTypeCache& builtin_types() {
  static BuiltinTypeCache* cache = new BuiltinTypeCache;  // leaked on purpose: used until exit
  return *cache;
}

}  // namespace

MPI_Count BufferSide::total_count() const {
  MPI_Count total = 0;
  for (const Block& b : blocks) total += b.count;
  return total;
}

Status type_info(MPI_Datatype type, TypeInfo* info) {
  // Refused without asking the base MPI: its type queries raise a bad handle on MPI_COMM_WORLD's
  // error handler (fatal by default), not on the communicator of the call being checked.
  if (!is_datatype_handle(type)) return Status(MPI_ERR_TYPE, "invalid datatype");
  if (!is_builtin_handle(type)) return query_type_info(type, info);
  if (builtin_types().find(type, info)) return {};
  MCRP_TRY(query_type_info(type, info));
  builtin_types().remember(type, *info);
  return {};
}

Status check_committed(MPI_Datatype type, MPI_Comm comm) {
  if (is_builtin_handle(type)) return {};
  MPI_Count bytes = 0;
  const int rc = PMPI_Pack_size_c(1, type, comm, &bytes);
  return from_base(rc);
}

Status check_side(const BufferSide& side, const TypeInfo& type) {
  MPI_Count bytes = 0;
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    MPI_Count first = 0, last = 0, block_bytes = 0;
    if (__builtin_mul_overflow(b.displacement, type.extent, &first) ||
        __builtin_mul_overflow(b.count - 1, type.extent, &last) || __builtin_add_overflow(first, last, &last) ||
        __builtin_add_overflow(last, type.true_lb + type.true_extent, &last) ||
        __builtin_mul_overflow(b.count, type.size, &block_bytes) || __builtin_add_overflow(bytes, block_bytes, &bytes)) {
      return Status(MPI_ERR_COUNT, "count * extent of the datatype overflows 2^63 bytes");
    }
  }
  if (side.base == nullptr && bytes > 0 && type.true_lb == 0) {
    return Status(MPI_ERR_BUFFER, "null buffer with a nonzero count");
  }
  return {};
}

Span span_of(const BufferSide& side, const TypeInfo& type) {
  Span span;
  bool first = true;
  for (const Block& b : side.blocks) {
    if (b.count <= 0) continue;
    const std::ptrdiff_t lo = b.displacement * type.extent + type.true_lb;
    const std::ptrdiff_t hi = lo + (b.count - 1) * type.extent + type.true_extent;
    span.lo = first ? lo : std::min(span.lo, lo);
    span.hi = first ? hi : std::max(span.hi, hi);
    first = false;
  }
  return span;
}

bool covers_span(const BufferSide& side, const TypeInfo& type, const Span& span) {
  return type.contiguous() && static_cast<std::size_t>(side.total_count() * type.size) == span.bytes();
}

}  // namespace mcrp
