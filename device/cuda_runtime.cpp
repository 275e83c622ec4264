#include "device/cuda_runtime.h"

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

}  // namespace

bool cuda_available() {
  static const bool available = probe_cuda();
  return available;
}

PointerInfo locate(const void* pointer) {
  PointerInfo info;
  if (pointer == nullptr || !cuda_available()) return info;
  if (fake_device()) {
    if (fake_contains(pointer)) info = PointerInfo{MemoryKind::device, 0};
    return info;
  }
  if (in_lasting_host_memory(pointer)) return info;  // a few ns instead of a driver query
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

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return {};
  return Status(MPI_ERR_OTHER, std::string(what) + ": " + cudaGetErrorString(error));
}

}  // namespace mcrp::device
