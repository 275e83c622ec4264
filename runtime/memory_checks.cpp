#include "runtime/memory_checks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "device/host_regions.h"

namespace mcrp {
namespace {

Status check_device_allocation(const BufferSide& side, const Span& span) {
  device::AllocationRange range;
  if (!device::allocation_range(side.base, &range)) return {};
  const auto base = reinterpret_cast<std::uintptr_t>(side.base);
  // Offsets from the allocation's start; the span may begin before the base (a negative lower bound).
  const auto offset = static_cast<std::intmax_t>(base - range.start);
  if (offset + span.lo >= 0 && offset + span.hi <= static_cast<std::intmax_t>(range.bytes)) return {};
  char text[320];
  std::snprintf(text, sizeof text,
                "device buffer too small for the call: the call reaches bytes [%td, %td) of the buffer at %p, its "
                "device allocation covers bytes [%jd, %jd) of it (%zu bytes at %p) (MCRPMPI_VERIFY)",
                span.lo, span.hi, static_cast<const void*>(side.base), -offset,
                static_cast<std::intmax_t>(range.bytes) - offset, range.bytes,
                reinterpret_cast<const void*>(range.start));
  return Status(MPI_ERR_BUFFER, text);
}

// msync validates the range it is given and fails with ENOMEM where part of it is not mapped; with
// MS_ASYNC it writes nothing back, so it is a cheap question to the kernel.
Status check_host_mapping(const BufferSide& side, const Span& span) {
  const char* first = side.base + span.lo;
  if (device::in_lasting_host_memory(first) && device::in_lasting_host_memory(side.base + span.hi - 1)) return {};
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(first) & ~(page - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(side.base + span.hi);
  if (msync(reinterpret_cast<void*>(start), end - start, MS_ASYNC) == 0 || errno != ENOMEM) return {};
  char text[256];
  std::snprintf(text, sizeof text,
                "buffer not mapped in this process: the call reaches bytes [%td, %td) of %p, which is no host memory "
                "and no device memory of this process (another process's device pointer?) (MCRPMPI_VERIFY)",
                span.lo, span.hi, static_cast<const void*>(side.base));
  return Status(MPI_ERR_BUFFER, text);
}

}  // namespace

Status check_buffer_memory(const BufferSide& side, const TypeInfo& type, const device::PointerInfo& memory) {
  if (!side.significant()) return {};
  const Span span = span_of(side, type);
  if (span.bytes() == 0) return {};
  return memory.kind == device::MemoryKind::device ? check_device_allocation(side, span)
                                                   : check_host_mapping(side, span);
}

Status check_buffer_memory(const StagedSides& sides) {
  for (auto [side, type] : {std::pair{&sides.send, &sides.send_type}, std::pair{&sides.recv, &sides.recv_type}}) {
    if (!side->significant() || side->blocks.empty()) continue;
    MCRP_TRY(check_buffer_memory(*side, *type, device::locate(first_reached_byte(*side))));
  }
  return {};
}

}  // namespace mcrp
