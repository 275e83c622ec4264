#include "runtime/buffer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "runtime/errors.h"
#include "runtime/mpich_handles.h"

namespace mcrp {
namespace {

// A datatype's constructor and how many arguments it was built from (MPI_Type_get_envelope).
struct Envelope {
  int integers = 0;
  int addresses = 0;
  int types = 0;
  int combiner = MPI_COMBINER_NAMED;
};

bool envelope_of(MPI_Datatype type, Envelope* e) {
  if (is_builtin_handle(type)) return true;  // predefined: named, nothing to ask
  return PMPI_Type_get_envelope(type, &e->integers, &e->addresses, &e->types, &e->combiner) == MPI_SUCCESS;
}

// Whether the type's bytes lie in the order of its type signature. Predefined types' do (the pair
// types such as MPI_FLOAT_INT are named too); of derived ones only a contiguous run or a duplicate
// of such a type is known to. Any other constructor may list its blocks out of address order (an
// hindexed type with displacements {4, 0} is gap-free yet swaps its two ints), so it counts as out
// of order and its data is packed, which is right for every type.
bool in_signature_order(MPI_Datatype type) {
  Envelope e;
  if (!envelope_of(type, &e)) return false;
  if (e.combiner == MPI_COMBINER_NAMED) return true;
  const bool one_run = e.combiner == MPI_COMBINER_CONTIGUOUS || e.combiner == MPI_COMBINER_DUP;
  if (!one_run || e.integers > 1 || e.addresses != 0 || e.types != 1) return false;
  int count = 0;
  MPI_Aint no_address = 0;
  MPI_Datatype old = MPI_DATATYPE_NULL;
  if (PMPI_Type_get_contents(type, e.integers, 0, 1, &count, &no_address, &old) != MPI_SUCCESS) return false;
  const bool ordered = in_signature_order(old);
  // MPI_Type_get_contents returns new handles for derived types, the caller's to free.
  Envelope old_envelope;
  if (envelope_of(old, &old_envelope) && old_envelope.combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&old);
  return ordered;
}

Status query_type_info(MPI_Datatype type, TypeInfo* info) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int rc = PMPI_Type_size_x(type, &info->size);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_extent_x(type, &lb, &extent);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  if (rc != MPI_SUCCESS) return Status(MPI_ERR_TYPE, "invalid datatype");
  info->extent = extent;
  info->true_lb = true_lb;
  info->true_extent = true_extent;
  // Only a gap-free type starting at 0 could move as plain bytes; for it the order decides.
  const bool gap_free = info->size == extent && info->size == true_extent && true_lb == 0;
  info->ordered = !gap_free || in_signature_order(type);
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

const char* first_reached_byte(const BufferSide& side) {
  TypeInfo type;
  // Sides that fail their checks (counts whose extents overflow) are located at the argument; the
  // call's validation reports them later, and span_of must not compute with them.
  if (!type_info(side.type, &type).ok() || !check_side(side, type).ok()) return side.base;
  const Span span = span_of(side, type);
  if (span.bytes() == 0) return side.base;
  // As an integer: from MPI_BOTTOM (NULL) the offsets are absolute addresses.
  return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(side.base) + span.lo);
}

bool covers_span(const BufferSide& side, const TypeInfo& type, const Span& span) {
  return type.contiguous() && static_cast<std::size_t>(side.total_count() * type.size) == span.bytes();
}

}  // namespace mcrp
