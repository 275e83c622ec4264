// Memory-kind detection: what each kind of memory is classified as, and what one classification
// costs (issue 15's goals: < 20 ns for host memory; device pointers cost one driver query, see
// device/host_regions.h for why they are not cached). Prints a table; exits 1 on a wrong kind (on
// a GPU also when the allocation range reported for a device pointer does not cover it), never on
// a time. `--gpu` exits 77 (skipped) where no CUDA device exists; without it the host rows run
// anywhere and the device rows say why they are missing.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "device/cuda_runtime.h"
#include "device/host_regions.h"
#include "tests/unit/fastest_round.h"

namespace {

using mcrp::device::MemoryKind;

int g_program_data[256];
int g_wrong = 0;

using mcrp_bench::nanoseconds_per_call;

const char* kind_name(MemoryKind kind) { return kind == MemoryKind::device ? "device" : "host"; }

// One row: classify `pointer` with the library's locate(), check the kind, time it.
void row(const char* what, const void* pointer, MemoryKind expected, const char* goal) {
  const MemoryKind got = mcrp::device::locate(pointer).kind;
  const double ns = nanoseconds_per_call([pointer] { return mcrp::device::locate(pointer).kind == MemoryKind::device; });
  const bool right = got == expected;
  if (!right) ++g_wrong;
  std::printf("%-44s %-7s %-7s %8.1f ns  %-8s %s\n", what, kind_name(expected), kind_name(got), ns, goal,
              right ? "" : "WRONG KIND");
}

void lasting_host_row(const char* what, const void* pointer, bool expected) {
  const bool got = mcrp::device::in_lasting_host_memory(pointer);
  const double ns = nanoseconds_per_call([pointer] { return mcrp::device::in_lasting_host_memory(pointer); });
  if (got != expected) ++g_wrong;
  std::printf("%-44s %-7s %-7s %8.1f ns  %-8s %s\n", what, expected ? "yes" : "no", got ? "yes" : "no", ns, "< 20 ns",
              got == expected ? "" : "WRONG");
}

bool cuda_ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::printf("%s failed: %s\n", what, cudaGetErrorString(error));
  ++g_wrong;
  return false;
}

// The allocation the driver reports for a device pointer (MCRPMPI_VERIFY's extent check,
// runtime/memory_checks.h): it must contain the pointer and cover what was asked for; how much more
// (the driver's rounding) and what one query costs are printed.
void range_row(const char* what, const void* pointer, const void* allocated, std::size_t asked) {
  mcrp::device::AllocationRange range;
  const bool found = mcrp::device::allocation_range(pointer, &range);
  const auto start = reinterpret_cast<std::uintptr_t>(allocated);
  const bool right = found && range.start <= start && range.start + range.bytes >= start + asked;
  if (!right) ++g_wrong;
  const double ns = nanoseconds_per_call([pointer] {
    mcrp::device::AllocationRange r;
    return mcrp::device::allocation_range(pointer, &r);
  });
  std::printf("%-44s asked %9zu B, reported %9zu B from %+td %8.1f ns  %s\n", what, asked, found ? range.bytes : 0,
              found ? static_cast<std::ptrdiff_t>(start - range.start) : 0, ns, right ? "" : "WRONG RANGE");
}

void range_rows(void* device, void* managed) {
  std::printf("\n%-44s\n", "allocation_range() (MCRPMPI_VERIFY's extent check)");
  range_row("cudaMalloc 1 MiB, at its start", device, device, 1 << 20);
  range_row("cudaMalloc 1 MiB, 1 KiB inside", static_cast<char*>(device) + 1024, device, 1 << 20);
  range_row("cudaMallocManaged 1 MiB", managed, managed, 1 << 20);
  void* small = nullptr;
  if (cuda_ok(cudaMalloc(&small, 12), "cudaMalloc")) {
    range_row("cudaMalloc 12 B (the driver's rounding)", small, small, 12);
    cudaFree(small);
  }
}

// The driver's own query, as UCX's memory-type detection makes it (cuPointerGetAttributes), beside
// the runtime's that locate() makes: the kind alone, and the three attributes locate() would need
// (kind, managed, device). Reference rows for a later choice: if the driver's query is much cheaper,
// every mmap'd host buffer and every device buffer gains it (issue 15's host goal).
using PointerAttributesQuery = CUresult (*)(unsigned count, CUpointer_attribute* attributes, void** data,
                                            CUdeviceptr pointer);

// `expected`: the CUmemorytype the driver must report (0 for memory it does not know).
void raw_query_rows(const char* what, const void* pointer, unsigned expected) {
  const double runtime = nanoseconds_per_call([pointer] {
    cudaPointerAttributes attributes{};
    return cudaPointerGetAttributes(&attributes, pointer) == cudaSuccess;
  });
  std::printf("%-44s %8.1f ns  (what locate() asks)\n", (std::string(what) + ": cudaPointerGetAttributes").c_str(),
              runtime);
  const auto query =
      reinterpret_cast<PointerAttributesQuery>(mcrp::device::driver_entry_point("cuPointerGetAttributes", 7000));
  if (query == nullptr) {
    std::printf("%-44s not found in the driver\n", "cuPointerGetAttributes");
    return;
  }
  const auto address = reinterpret_cast<CUdeviceptr>(pointer);
  auto ask_kind = [query, address](unsigned* type) {
    CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    void* data[] = {type};
    return query(1, &attribute, data, address) == CUDA_SUCCESS;
  };
  unsigned reported = 0;
  if (!ask_kind(&reported) || reported != expected) {
    std::printf("%-44s reported memory type %u, not %u: WRONG KIND\n", what, reported, expected);
    ++g_wrong;
  }
  const double kind_only = nanoseconds_per_call([&ask_kind] {
    unsigned type = 0;
    return ask_kind(&type);
  });
  std::printf("%-44s %8.1f ns\n", (std::string(what) + ": cuPointerGetAttributes, kind").c_str(), kind_only);
  const double three = nanoseconds_per_call([query, address] {
    unsigned type = 0, managed = 0;
    int ordinal = -1;
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* data[] = {&type, &managed, &ordinal};
    return query(3, attributes, data, address) == CUDA_SUCCESS;
  });
  std::printf("%-44s %8.1f ns\n", (std::string(what) + ": the same, 3 attributes").c_str(), three);
}

void device_rows() {
  void* device = nullptr;
  void* managed = nullptr;
  void* pinned = nullptr;
  if (!cuda_ok(cudaMalloc(&device, 1 << 20), "cudaMalloc") || !cuda_ok(cudaMallocManaged(&managed, 1 << 20), "cudaMallocManaged") ||
      !cuda_ok(cudaMallocHost(&pinned, 1 << 20), "cudaMallocHost")) {
    return;
  }
  row("cudaMalloc (the same pointer again and again)", device, MemoryKind::device, "< 50 ns");
  row("cudaMalloc, 1 KiB inside", static_cast<char*>(device) + 1024, MemoryKind::device, "< 50 ns");
  row("cudaMallocManaged", managed, MemoryKind::device, "< 50 ns");
  row("cudaMallocHost (pinned)", pinned, MemoryKind::host, "< 20 ns");
  std::printf("\n%-44s\n", "the driver query alone, by API (reference)");
  raw_query_rows("device", device, CU_MEMORYTYPE_DEVICE);
  void* mapped_host = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped_host != MAP_FAILED) {
    raw_query_rows("mmap'd host", mapped_host, 0);
    munmap(mapped_host, 1 << 20);
  }
  range_rows(device, managed);

  // Freed and reused: nothing stale may answer.
  cudaFree(device);
  void* pinned_after = nullptr;
  if (cuda_ok(cudaMallocHost(&pinned_after, 1 << 20), "cudaMallocHost")) {
    row("pinned allocated after a cudaFree", pinned_after, MemoryKind::host, "");
    cudaFreeHost(pinned_after);
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  void* pooled = nullptr;
  if (cuda_ok(cudaMallocAsync(&pooled, 1 << 20, stream), "cudaMallocAsync")) {
    cudaStreamSynchronize(stream);
    row("cudaMallocAsync (stream-ordered pool)", pooled, MemoryKind::device, "< 50 ns");
    range_row("cudaMallocAsync 1 MiB (allocation_range)", pooled, pooled, 1 << 20);
    cudaFreeAsync(pooled, stream);
    cudaStreamSynchronize(stream);
  }
  cudaStreamDestroy(stream);
  // Host memory registered with CUDA stays host, before and after unregistering.
  void* mapped = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped != MAP_FAILED && cuda_ok(cudaHostRegister(mapped, 1 << 20, cudaHostRegisterDefault), "cudaHostRegister")) {
    row("cudaHostRegister'ed mmap", mapped, MemoryKind::host, "");
    cudaHostUnregister(mapped);
    row("the same after cudaHostUnregister", mapped, MemoryKind::host, "");
  }
  if (mapped != MAP_FAILED) munmap(mapped, 1 << 20);
  cudaFree(managed);
  cudaFreeHost(pinned);
}

}  // namespace

int main(int argc, char** argv) {
  const bool gpu_required = argc > 1 && std::strcmp(argv[1], "--gpu") == 0;
  const bool gpu = mcrp::device::cuda_available();
  if (gpu_required && !gpu) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  int stack_data[64] = {};
  std::unique_ptr<char[]> heap(new char[256]);
  void* mapped = mmap(nullptr, 1 << 22, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  std::printf("%-44s %-7s %-7s %11s  %-8s\n", "lasting host memory (no CUDA call)", "want", "got", "per call", "goal");
  // Allocators that do not use brk (ASan's, jemalloc, tcmalloc) put even small blocks in mmap'd
  // memory, which is left to the driver: the row then expects "no".
  const bool heap_in_brk = mcrp::device::brk_heap().contains(reinterpret_cast<std::uintptr_t>(heap.get()));
  lasting_host_row(heap_in_brk ? "heap (brk), 256 B" : "heap, 256 B (this allocator does not use brk)", heap.get(),
                   heap_in_brk);
  lasting_host_row("stack of the calling thread", stack_data, true);
  lasting_host_row("main program's data (.bss)", g_program_data, true);
  lasting_host_row("mmap'd host buffer (left to the driver)", mapped, false);

  std::printf("\n%-44s %-7s %-7s %11s  %-8s\n", "locate() (what the router calls)", "want", "got", "per call", "goal");
  row("heap (brk), 256 B", heap.get(), MemoryKind::host, "< 20 ns");
  row("stack of the calling thread", stack_data, MemoryKind::host, "< 20 ns");
  row("main program's data (.bss)", g_program_data, MemoryKind::host, "< 20 ns");
  row("mmap'd host buffer (one driver query)", mapped, MemoryKind::host, "");
  if (gpu && !std::getenv("MCRPMPI_FAKE_DEVICE")) {
    device_rows();
  } else {
    std::printf("pinned, device, managed, pool and reuse rows: %s\n",
                gpu ? "not with the fake device" : "no CUDA device here (run with a GPU)");
  }
  if (mapped != MAP_FAILED) munmap(mapped, 1 << 22);
  std::printf("\n%s\n", g_wrong == 0 ? "all kinds right" : "SOME KINDS WRONG");
  return g_wrong == 0 ? 0 : 1;
}
