#include "device/cuda_runtime.h"

#include <cuda.h>

#include <cstdlib>
#include <string>

#include "device/fake_device.h"
#include "device/host_regions.h"

namespace mcrp::device {
namespace {

bool probe_cuda() {
  const char* disabled = std::getenv("MCRPMPI_DISABLE_CUDA");
  if (disabled != nullptr && disabled[0] != '\0' && disabled[0] != '0') return false;
  if (fake_device()) return true;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error so later queries start clean
    return false;
  }
  return count > 0;
}

// cuMemGetAddressRange, looked up once.
using AddressRangeQuery = CUresult (*)(CUdeviceptr* base, std::size_t* bytes, CUdeviceptr pointer);

AddressRangeQuery address_range_query() {
  static const auto query = reinterpret_cast<AddressRangeQuery>(driver_entry_point("cuMemGetAddressRange", 3020));
  return query;
}

}  // namespace

void* driver_entry_point(const char* symbol, unsigned version) {
#if CUDART_VERSION >= 12050
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &function, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return function;
#else
  (void)symbol;
  (void)version;
  return nullptr;
#endif
}

bool cuda_available() {
  static const bool available = probe_cuda();
  return available;
}

PointerInfo locate(const void* pointer) {
  PointerInfo info;
  if (pointer == nullptr || !cuda_available()) return info;
  if (in_lasting_host_memory(pointer)) return info;  // a few ns instead of a driver query
  if (fake_device()) {  // its memory is never in those places either (fake_allocate)
    if (fake_contains(pointer)) info = PointerInfo{MemoryKind::device, 0};
    return info;
  }
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return info;
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) {
    info.kind = MemoryKind::device;
    info.device = attributes.device;
  }
  return info;
}

bool allocation_range(const void* pointer, AllocationRange* range) {
  if (pointer == nullptr || !cuda_available()) return false;
  if (fake_device()) return fake_range(pointer, &range->start, &range->bytes);
  const AddressRangeQuery query = address_range_query();
  if (query == nullptr) return false;
  CUdeviceptr start = 0;
  std::size_t bytes = 0;
  if (query(&start, &bytes, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) return false;
  range->start = static_cast<std::uintptr_t>(start);
  range->bytes = bytes;
  return true;
}

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return {};
  return Status(MPI_ERR_OTHER, std::string(what) + ": " + cudaGetErrorString(error));
}

}  // namespace mcrp::device
