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

// cuPointerGetAttributes, looked up once. On the H200 (2026-11-27, mcrpmpi_memory_kind_bench --gpu)
// it took 44 ns for a device pointer and 110 ns for an mmap'd host one, asking the three attributes
// below, where cudaPointerGetAttributes took 82 and 123 ns.
using PointerAttributesQuery = CUresult (*)(unsigned count, CUpointer_attribute* attributes, void** data,
                                            CUdeviceptr pointer);

PointerAttributesQuery pointer_attributes_query() {
  static const auto query = reinterpret_cast<PointerAttributesQuery>(driver_entry_point("cuPointerGetAttributes", 7000));
  return query;
}

// The driver's answer, or false when it gave none (then the runtime is asked). Memory the driver
// does not know comes back as type 0 with success. Managed memory counts as device, as
// cudaPointerGetAttributes's cudaMemoryTypeManaged does; pinned and registered host memory
// (CU_MEMORYTYPE_HOST) as host.
bool locate_with_driver(const void* pointer, PointerInfo* info) {
  const PointerAttributesQuery query = pointer_attributes_query();
  if (query == nullptr) return false;
  unsigned type = 0;
  unsigned managed = 0;
  int ordinal = -1;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[] = {&type, &managed, &ordinal};
  if (query(3, attributes, data, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) return false;
  const bool device = managed != 0 || type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED;
  if (!device) return true;  // host: info stays so
  if (ordinal < 0) return false;
  *info = PointerInfo{MemoryKind::device, ordinal};
  return true;
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
  if (locate_with_driver(pointer, &info)) return info;
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
