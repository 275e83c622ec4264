// What the library asks of the CUDA runtime: is there a usable GPU, and where does a pointer live.
// The runtime is linked statically, so the library loads on machines with no driver; there
// cuda_available() is false and no other CUDA call is ever made.
#pragma once
#include <cuda_runtime_api.h>

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

// Turns a CUDA error into a Status naming the call that failed, e.g. "cudaMemcpyAsync: invalid argument".
Status cuda_status(cudaError_t error, const char* what);

}  // namespace mcrp::device
