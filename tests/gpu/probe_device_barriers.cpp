// Which CUDA calls wait for a kernel that is still running on another stream? The library's rule 2
// (never let the GPU block MPI progress) depends on the answer: an NCCL kernel can run for as long as
// a peer keeps it waiting, and a call that waits for it -- holding the context's lock, so that every
// other thread's next CUDA call waits too -- hangs both ranks when the peer needs this rank's next
// step first. cudaFree and cudaFreeHost were seen doing it on the H100 (runtime/nccl_teardown.h);
// Caffe2's developers reported it for cudaMallocHost (NVIDIA/nccl#70). This probe settles it for
// the machine it runs on, for each call the library makes while NCCL work may be in flight.
//
// For each call: a one-thread kernel that spins until a flag in mapped pinned memory turns nonzero
// is launched on a stream of its own; the call runs on a second thread; if it has not returned after
// --patience ms (default 1000) it is reported as waiting for the kernel. Then the flag is set, the
// kernel ends and the call returns. The kernel is PTX loaded at run time (cudaLibraryLoadData), so
// the probe needs no CUDA compiler. Prints one line per call and exits 0; exits 1 on a CUDA error and
// 77 without a CUDA device. A call that never returns even after the kernel ended is the test's
// timeout.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kSkip = 77;
constexpr std::size_t kBytes = std::size_t{1} << 20;

// spin(flag): while (*(volatile unsigned*)flag == 0) {}
constexpr const char* kSpinPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 flag)
{
  .reg .pred %p;
  .reg .b32 %r;
  .reg .b64 %a;
  ld.param.u64 %a, [flag];
  cvta.to.global.u64 %a, %a;
WAIT:
  ld.volatile.global.u32 %r, [%a];
  setp.eq.u32 %p, %r, 0;
  @%p bra WAIT;
  ret;
}
)";

void require(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  std::fprintf(stderr, "probe_device_barriers: %s failed: %s\n", what, cudaGetErrorString(rc));
  std::exit(1);
}

struct Spinner {
  cudaKernel_t kernel = nullptr;
  cudaStream_t stream = nullptr;
  volatile unsigned* flag = nullptr;  // mapped pinned memory: the host sets it, the kernel reads it
  void* flag_on_device = nullptr;

  void start() {
    *flag = 0;
    void* args[] = {&flag_on_device};
    require(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(1), dim3(1), args, 0, stream),
            "cudaLaunchKernel(spin)");
  }
  void release_and_wait() {
    *flag = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    require(cudaStreamSynchronize(stream), "cudaStreamSynchronize(spin)");
  }
};

// Runs `call` on its own thread while the kernel spins; true when it returned within `patience`.
bool returns_while_kernel_runs(Spinner& spinner, const std::function<void()>& call, std::chrono::milliseconds patience) {
  spinner.start();
  std::atomic<bool> returned{false};
  int device = 0;
  require(cudaGetDevice(&device), "cudaGetDevice");
  std::thread caller([&] {
    require(cudaSetDevice(device), "cudaSetDevice");
    call();
    returned.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!returned.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool in_time = returned.load();
  spinner.release_and_wait();
  caller.join();
  return in_time;
}

}  // namespace

int main(int argc, char** argv) {
  std::chrono::milliseconds patience(1000);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--patience") == 0) patience = std::chrono::milliseconds(std::atoi(argv[i + 1]));
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return kSkip;
  }
  require(cudaSetDevice(0), "cudaSetDevice");

  Spinner spinner;
  cudaLibrary_t library = nullptr;
  require(cudaLibraryLoadData(&library, kSpinPtx, nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData");
  require(cudaLibraryGetKernel(&spinner.kernel, library, "spin"), "cudaLibraryGetKernel");
  require(cudaStreamCreateWithFlags(&spinner.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* flag = nullptr;
  require(cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc(flag)");
  spinner.flag = static_cast<volatile unsigned*>(flag);
  require(cudaHostGetDevicePointer(&spinner.flag_on_device, flag, 0), "cudaHostGetDevicePointer");

  cudaStream_t other = nullptr;  // the library's copy stream stands in for this one
  require(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* device_source = nullptr;
  require(cudaMalloc(&device_source, kBytes), "cudaMalloc");
  void* pinned_target = nullptr;
  require(cudaMallocHost(&pinned_target, kBytes), "cudaMallocHost");
  std::vector<char> pageable_target(kBytes);
  std::vector<char> registrable(kBytes);

  // A block made before a free's probe (so that the probe times the free alone), or left by an
  // allocation's probe (freed once the kernel has ended).
  void* block = nullptr;
  const auto nothing = [] {};
  const auto free_pinned = [&] { require(cudaFreeHost(block), "cudaFreeHost"); };
  const auto free_device = [&] { require(cudaFree(block), "cudaFree"); };
  // A copy of kBytes on the other stream, and its synchronization (the library's copy stream).
  const auto copy_on_other = [&](void* to, const void* from, cudaMemcpyKind kind) {
    return [&other, to, from, kind] {
      require(cudaMemcpyAsync(to, from, kBytes, kind, other), "cudaMemcpyAsync");
      require(cudaStreamSynchronize(other), "cudaStreamSynchronize");
    };
  };
  struct Probe {
    const char* name;
    std::function<void()> prepare;  // before the kernel starts
    std::function<void()> call;     // while it runs
    std::function<void()> cleanup;  // after it ended
  };
  const std::vector<Probe> probes = {
      {"cudaMallocHost 1 MiB", nothing, [&] { require(cudaMallocHost(&block, kBytes), "cudaMallocHost"); },
       free_pinned},
      {"cudaFreeHost 1 MiB", [&] { require(cudaMallocHost(&block, kBytes), "cudaMallocHost"); }, free_pinned,
       nothing},
      {"cudaMalloc 1 MiB", nothing, [&] { require(cudaMalloc(&block, kBytes), "cudaMalloc"); }, free_device},
      {"cudaFree 1 MiB", [&] { require(cudaMalloc(&block, kBytes), "cudaMalloc"); }, free_device, nothing},
      {"cudaHostRegister 1 MiB", nothing,
       [&] { require(cudaHostRegister(registrable.data(), kBytes, cudaHostRegisterDefault), "cudaHostRegister"); },
       nothing},
      {"cudaHostUnregister 1 MiB", nothing,
       [&] { require(cudaHostUnregister(registrable.data()), "cudaHostUnregister"); }, nothing},
      {"cudaMallocAsync + cudaFreeAsync, other stream", nothing,
       [&] {
         void* p = nullptr;
         require(cudaMallocAsync(&p, kBytes, other), "cudaMallocAsync");
         require(cudaFreeAsync(p, other), "cudaFreeAsync");
         require(cudaStreamSynchronize(other), "cudaStreamSynchronize");
       },
       nothing},
      {"cudaMemcpyAsync device->pinned, other stream + sync", nothing,
       copy_on_other(pinned_target, device_source, cudaMemcpyDeviceToHost), nothing},
      {"cudaMemcpyAsync device->pageable, other stream + sync", nothing,
       copy_on_other(pageable_target.data(), device_source, cudaMemcpyDeviceToHost), nothing},
      {"cudaMemcpyAsync pageable->device, other stream + sync", nothing,
       copy_on_other(device_source, pageable_target.data(), cudaMemcpyHostToDevice), nothing},
      {"cudaEventCreate + cudaEventDestroy", nothing,
       [&] {
         cudaEvent_t event = nullptr;
         require(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
         require(cudaEventDestroy(event), "cudaEventDestroy");
       },
       nothing},
      {"cudaStreamCreate + cudaStreamDestroy (non-blocking)", nothing,
       [&] {
         cudaStream_t stream = nullptr;
         require(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
         require(cudaStreamDestroy(stream), "cudaStreamDestroy");
       },
       nothing},
  };

  std::printf("probe_device_barriers: does each call return while a kernel spins on another stream? (patience %lld ms)\n",
              static_cast<long long>(patience.count()));
  int waiting = 0;
  for (const Probe& probe : probes) {
    probe.prepare();
    const bool in_time = returns_while_kernel_runs(spinner, probe.call, patience);
    probe.cleanup();
    waiting += in_time ? 0 : 1;
    std::printf("  %-56s %s\n", probe.name, in_time ? "returns" : "WAITS for the kernel");
  }
  std::printf("probe_device_barriers: %d of %zu calls wait for a running kernel\n", waiting, probes.size());
  cudaFreeHost(pinned_target);
  cudaFree(device_source);
  cudaFreeHost(flag);
  cudaStreamDestroy(other);
  cudaStreamDestroy(spinner.stream);
  cudaLibraryUnload(library);
  return 0;
}
