// What each CUDA call of the NCCL path's direct blocking launch costs the calling thread (issue 15:
// on the H200 the library's own time was 4.46 us a blocking 8 B allreduce, 3.16 of it in the
// profile's queue step, which holds these calls; the goal is 2 us). Two tables: the raw runtime calls
// the path makes, each alone, and the library's wrappers around them (device/handles.h,
// device/ordered_streams.h) as run_direct strings them together, NCCL's launch and the wait for the
// GPU left out. Every stream is idle, as the legacy default stream is when a benchmark calls
// MPI_Allreduce. Prints; exits 1 when a call fails, never on a time. `--gpu` exits 77 (skipped) where
// no CUDA device exists; the fake device (MCRPMPI_FAKE_DEVICE=1) runs the library's table only, so
// CPU CI runs the program. Run it as the ranks run (under MPS when several ranks share the GPU:
// tests/gpu/measure-figures.sh's part `calls` runs it both ways).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/handles.h"
#include "device/ordered_streams.h"
#include "tests/unit/fastest_round.h"

namespace {

namespace dev = mcrp::device;

// CUDA calls take 0.05-5 us: fewer calls per round than the memory-kind benchmark's, so that a row
// takes well under a second on a GPU.
constexpr int kCalls = 1 << 14;
constexpr int kRounds = 5;

int g_failed = 0;

bool succeeded(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::printf("%-58s failed: %s\n", what, cudaGetErrorString(error));
  ++g_failed;
  return false;
}

bool succeeded(const mcrp::Status& status, const char* what) {
  if (status.ok()) return true;
  std::printf("%-58s failed: %s\n", what, status.message().c_str());
  ++g_failed;
  return false;
}

// Times `call` when one call of it succeeds; `call` returns whether it did.
void row(const char* what, const std::function<bool()>& call, const char* note = "") {
  if (!call()) {
    std::printf("%-58s failed\n", what);
    ++g_failed;
    return;
  }
  const double ns = mcrp_bench::nanoseconds_per_call(call, kCalls, kRounds);
  std::printf("%-58s %9.1f ns  %s\n", what, ns, note);
}

// The runtime calls, each alone, on an idle non-blocking stream like an NCCL communicator's.
void runtime_rows(int device) {
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr, legacy_event = nullptr;
  if (!succeeded(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") ||
      !succeeded(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags") ||
      !succeeded(cudaEventCreateWithFlags(&legacy_event, cudaEventDisableTiming), "cudaEventCreateWithFlags")) {
    return;
  }
  char heading[64];
  std::snprintf(heading, sizeof heading, "the runtime's calls, each alone (device %d)", device);
  std::printf("%-58s %12s\n", heading, "per call");
  row("cudaGetDevice", [] {
    int current = -1;
    return cudaGetDevice(&current) == cudaSuccess;
  }, "x3 a call: two device guards, the event pool");
  row("cudaStreamQuery(cudaStreamLegacy), idle", [] { return cudaStreamQuery(cudaStreamLegacy) == cudaSuccess; },
      "before the launch");
  row("cudaStreamQuery, an idle non-blocking stream", [stream] { return cudaStreamQuery(stream) == cudaSuccess; },
      "(not made: reference)");
  row("cudaEventRecord on an idle non-blocking stream", [event, stream] {
    return cudaEventRecord(event, stream) == cudaSuccess;
  }, "after the launch");
  // The records above may still be on their way through the GPU: the query row wants them done.
  succeeded(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  row("cudaEventQuery, a completed event", [event] { return cudaEventQuery(event) == cudaSuccess; },
      "each poll of the wait");
  row("cudaEventRecord(legacy) + cudaStreamWaitEvent", [legacy_event, stream] {
    return cudaEventRecord(legacy_event, cudaStreamLegacy) == cudaSuccess &&
           cudaStreamWaitEvent(stream, legacy_event, 0) == cudaSuccess;
  }, "before the launch when the legacy stream is busy");
  row("cudaStreamSynchronize, an idle stream", [stream] { return cudaStreamSynchronize(stream) == cudaSuccess; },
      "(raw NCCL's benchmark completes so: reference)");
  // The legacy stream must be idle again for the library's rows (tens of thousands of records above).
  succeeded(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaEventDestroy(legacy_event);
  cudaEventDestroy(event);
  cudaStreamDestroy(stream);
}

// The library's wrappers, in run_direct's order (collectives/nccl_path.cpp): a device guard, the
// ordering after the legacy stream, a pooled event recorded after the (here absent) launch and
// polled once complete.
void library_rows(int device) {
  dev::Stream stream;
  {
    dev::DeviceGuard on_device(device);
    if (!succeeded(dev::create_library_stream(stream), "create_library_stream")) return;
  }
  cudaStream_t s = stream.get();
  std::printf("\n%-58s %12s\n", "the library's wrappers (device/handles.h, ordered_streams.h)", "per call");
  row("DeviceGuard on the current device", [device] {
    dev::DeviceGuard on_device(device);
    return true;
  }, "one cudaGetDevice");
  row("order_after_legacy_stream, legacy stream idle", [device, s] {
    return dev::order_after_legacy_stream(device, s).ok();
  }, "guard + cudaStreamQuery");
  row("an Event from the pool and back", [] {
    dev::Event event;
    return dev::create_event(event).ok();
  }, "cudaGetDevice, a mutex twice, three map lookups");
  row("record_event (pooled) + query_event, completed", [s] {
    dev::Event done;
    bool complete = false;
    return dev::record_event(s, done).ok() && dev::query_event(done.get(), &complete).ok();
  }, "the completion event, its first poll");
  row("all of the above: the direct path's CUDA steps", [device, s] {
    dev::DeviceGuard on_device(device);
    if (!dev::order_after_legacy_stream(device, s).ok()) return false;
    dev::Event done;
    bool complete = false;
    return dev::record_event(s, done).ok() && dev::query_event(done.get(), &complete).ok();
  }, "issue 15: own time <= 2 us in all");
}

}  // namespace

int main(int argc, char** argv) {
  const bool gpu_required = argc > 1 && std::strcmp(argv[1], "--gpu") == 0;
  const bool fake = dev::fake_device();
  if (!dev::cuda_available() || (gpu_required && fake)) {
    std::printf("SKIPPED: %s\n", fake ? "the fake device has no CUDA calls to time (--gpu)" : "no CUDA device");
    return gpu_required ? 77 : 0;
  }
  int device = 0;
  if (!fake && !succeeded(cudaGetDevice(&device), "cudaGetDevice")) return 1;
  if (!fake) runtime_rows(device);
  library_rows(fake ? 0 : device);
  if (g_failed != 0) std::printf("\n%d calls failed\n", g_failed);
  return g_failed == 0 ? 0 : 1;
}
