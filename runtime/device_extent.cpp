#include "runtime/device_extent.h"

#include <cinttypes>
#include <cstdio>

namespace mcrp {

Status check_device_extent(const BufferSide& side, const TypeInfo& type, const device::PointerInfo& memory) {
  if (memory.kind != device::MemoryKind::device || !side.significant()) return {};
  const Span span = span_of(side, type);
  if (span.bytes() == 0) return {};
  device::AllocationRange range;
  if (!device::allocation_range(side.base, &range)) return {};
  const auto base = reinterpret_cast<std::uintptr_t>(side.base);
  // Offsets from the allocation's start; the span may begin before the base (a negative lower bound).
  const auto offset = static_cast<std::intmax_t>(base - range.start);
  const std::intmax_t first = offset + span.lo;
  const std::intmax_t end = offset + span.hi;
  if (first >= 0 && end <= static_cast<std::intmax_t>(range.bytes)) return {};
  char text[320];
  std::snprintf(text, sizeof text,
                "device buffer too small for the call: the call reaches bytes [%td, %td) of the buffer at %p, its "
                "device allocation covers bytes [%jd, %jd) of it (%zu bytes at %p) (MCRPMPI_VERIFY)",
                span.lo, span.hi, static_cast<const void*>(side.base), -offset,
                static_cast<std::intmax_t>(range.bytes) - offset, range.bytes, reinterpret_cast<const void*>(range.start));
  return Status(MPI_ERR_BUFFER, text);
}

}  // namespace mcrp
