#include "device/gpu_affinity.h"

#include <cuda_runtime_api.h>
#include <hwloc.h>

#include <vector>

#include "device/cuda_runtime.h"

namespace mcrp::device {
namespace {

// GPUs whose nearest CPUs intersect this process's binding, in CUDA ordinal order.
std::vector<int> gpus_near_binding(int device_count) {
  std::vector<int> near;
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return near;
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_bitmap_t binding = hwloc_bitmap_alloc();
  if (hwloc_topology_load(topology) == 0 &&
      hwloc_get_cpubind(topology, binding, HWLOC_CPUBIND_PROCESS) == 0 &&
      !hwloc_bitmap_isequal(binding, hwloc_topology_get_complete_cpuset(topology))) {
    for (int device = 0; device < device_count; ++device) {
      char bus_id[32] = {0};
      if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) continue;
      hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, bus_id);
      hwloc_obj_t parent = pci ? hwloc_get_non_io_ancestor_obj(topology, pci) : nullptr;
      if (parent != nullptr && hwloc_bitmap_intersects(parent->cpuset, binding)) near.push_back(device);
    }
  }
  hwloc_bitmap_free(binding);
  hwloc_topology_destroy(topology);
  return near;
}

}  // namespace

int nearest_gpu(int local_rank) {
  if (!cuda_available()) return -1;
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) return -1;
  if (local_rank < 0) local_rank = 0;
  const std::vector<int> near = gpus_near_binding(device_count);
  if (!near.empty()) return near[static_cast<std::size_t>(local_rank) % near.size()];
  return local_rank % device_count;
}

}  // namespace mcrp::device
