// What the library asks of the CUDA runtime: is there a usable GPU, and where does a pointer live.
// The runtime is linked statically, so the library loads on machines with no driver; there
// cuda_available() is false and no other CUDA call is ever made.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "device/status.h"

namespace mcrp::device {

// True when a CUDA driver and at least one device are present and MCRPMPI_DISABLE_CUDA is unset.
// Decided once per process; later calls cost one load.
bool cuda_available();

enum class MemoryKind { host, device };

struct PointerInfo {
  MemoryKind kind = MemoryKind::host;
  int device = -1;  // CUDA ordinal for device memory
};

// Device and managed memory count as device memory; pinned and pageable host memory as host.
// Null pointers (and so MPI_BOTTOM) are host. Never fails: unknown pointers are host.
PointerInfo locate(const void* pointer);

// The device allocation that holds `pointer`, as the driver (cuMemGetAddressRange) or the fake device
// records it; false when none is known (host memory, a pointer from another process, a runtime
// without driver entry points). Allocators that carve blocks out of larger allocations (PyTorch's
// and CuPy's caches, cudaMallocAsync pools) show here as their whole allocation, and the driver may
// round an allocation up to its granularity: a range is an upper bound on what the program may touch.
struct AllocationRange {
  std::uintptr_t start = 0;
  std::size_t bytes = 0;
};
bool allocation_range(const void* pointer, AllocationRange* range);

// A driver function by name, from the driver the static runtime loaded (the library does not link
// against libcuda, so that it still loads without a driver), as it was in CUDA `version` (e.g. 3020
// for 3.2); null when the runtime or the driver cannot give it.
void* driver_entry_point(const char* symbol, unsigned version);

// Turns a CUDA error into a Status naming the call that failed, e.g. "cudaMemcpyAsync: invalid argument".
Status cuda_status(cudaError_t error, const char* what);

}  // namespace mcrp::device
