#include "runtime/nccl_api.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device/fake_device.h"
#include "device/quiet_work.h"
#include "runtime/config.h"
#include "runtime/nccl_teardown.h"

namespace mcrp {
namespace {

struct Loaded {
  NcclApi api;
  bool ok = false;
  std::string error;
};

template <typename Fn>
bool bind(void* library, const char* name, Fn* slot, std::string* missing) {
  *slot = reinterpret_cast<Fn>(dlsym(library, name));
  if (*slot == nullptr && missing != nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *slot != nullptr;
}

Loaded load() {
  Loaded loaded;
  const char* configured = std::getenv("MCRPMPI_NCCL_LIBRARY");
  // The fake device's memory is host memory: only a library named explicitly (the test suite's fake
  // NCCL, tests/fake_nccl) may see it, never the real NCCL.
  if (device::fake_device() && (configured == nullptr || configured[0] == '\0')) {
    loaded.error = "NCCL is not used with the fake device (MCRPMPI_FAKE_DEVICE) unless MCRPMPI_NCCL_LIBRARY names one";
    return loaded;
  }
  const char* name = configured != nullptr && configured[0] != '\0' ? configured : "libnccl.so.2";
  // Before NCCL reads it, at its first communicator's setup (nccl_inline_launch()). Not when this
  // NCCL is in the process already (PyTorch's NCCL backend, say, linked to the same libnccl.so.2):
  // it may have set up a communicator and read the variable, and a value set now would be believed
  // here and not there. Left unset, nccl_inline_launch() then chooses nonblocking communicators.
  void* earlier = config().nccl_inline_launch ? dlopen(name, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (earlier != nullptr) {
    dlclose(earlier);
  } else if (config().nccl_inline_launch) {
    setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  }
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    loaded.error = std::string("cannot load ") + name + ": " + dlerror();
    return loaded;
  }
  NcclApi& a = loaded.api;
  std::string missing;
  bind(library, "ncclGetVersion", &a.GetVersion, &missing);
  bind(library, "ncclGetUniqueId", &a.GetUniqueId, &missing);
  bind(library, "ncclCommInitRankConfig", &a.CommInitRankConfig, &missing);
  bind(library, "ncclCommFinalize", &a.CommFinalize, &missing);
  bind(library, "ncclCommDestroy", &a.CommDestroy, &missing);
  bind(library, "ncclCommAbort", &a.CommAbort, &missing);
  bind(library, "ncclCommGetAsyncError", &a.CommGetAsyncError, &missing);
  bind(library, "ncclGetErrorString", &a.GetErrorString, &missing);
  bind(library, "ncclGetLastError", &a.GetLastError, &missing);
  bind(library, "ncclAllReduce", &a.AllReduce, &missing);
  bind(library, "ncclReduce", &a.Reduce, &missing);
  bind(library, "ncclBroadcast", &a.Broadcast, &missing);
  bind(library, "ncclAllGather", &a.AllGather, &missing);
  bind(library, "ncclReduceScatter", &a.ReduceScatter, &missing);
  bind(library, "ncclSend", &a.Send, &missing);
  bind(library, "ncclRecv", &a.Recv, &missing);
  bind(library, "ncclGroupStart", &a.GroupStart, &missing);
  bind(library, "ncclGroupEnd", &a.GroupEnd, &missing);
  bind(library, "ncclCommRevoke", &a.CommRevoke, nullptr);
  bind(library, "ncclAlltoAll", &a.AlltoAll, nullptr);
  bind(library, "ncclGather", &a.Gather, nullptr);
  bind(library, "ncclScatter", &a.Scatter, nullptr);
  if (!missing.empty()) {
    loaded.error = std::string(name) + " lacks " + missing;
    return loaded;
  }
  a.GetVersion(&a.version);
  loaded.ok = true;
  // From here on NCCL work may be in flight, so what synchronizes the device waits for a quiet moment.
  device::set_quiet_gate(&run_if_nccl_quiet);
  // The test suite's fake NCCL plays a GPU's kernels: a free or pinned allocation made on the fake
  // device waits for them, and a pageable copy for those on its stream.
  if (device::fake_device()) {
    if (void* wait = dlsym(library, "mcrpmpi_fake_nccl_wait_for_kernels")) {
      device::set_fake_kernel_wait(reinterpret_cast<void (*)()>(wait));
    }
    if (void* wait = dlsym(library, "mcrpmpi_fake_nccl_wait_for_stream")) {
      device::set_fake_stream_wait(reinterpret_cast<void (*)(cudaStream_t)>(wait));
    }
    void* enter = dlsym(library, "mcrpmpi_fake_nccl_enter_context");
    void* leave = dlsym(library, "mcrpmpi_fake_nccl_leave_context");
    if (enter != nullptr && leave != nullptr) {
      device::set_fake_context_gate(reinterpret_cast<void (*)()>(enter), reinterpret_cast<void (*)()>(leave));
    }
    // One whose launches return before their work is done: events on its streams say when it is.
    auto* late = reinterpret_cast<int (*)()>(dlsym(library, "mcrpmpi_fake_nccl_late_kernels"));
    void* mark = dlsym(library, "mcrpmpi_fake_nccl_stream_mark");
    void* reached = dlsym(library, "mcrpmpi_fake_nccl_stream_reached");
    void* run_after = dlsym(library, "mcrpmpi_fake_nccl_run_after");
    if (late != nullptr && late() != 0 && mark != nullptr && reached != nullptr && run_after != nullptr) {
      device::set_fake_stream_marks(reinterpret_cast<std::uint64_t (*)(cudaStream_t)>(mark),
                                    reinterpret_cast<int (*)(cudaStream_t, std::uint64_t)>(reached),
                                    reinterpret_cast<int (*)(cudaStream_t, void (*)(void*), void*)>(run_after));
    }
  }
  return loaded;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

}  // namespace

const NcclApi* nccl_api() { return loaded().ok ? &loaded().api : nullptr; }
const std::string& nccl_load_error() { return loaded().error; }

namespace {

// Whether the communicators can be blocking ones; `why` says why not.
bool blocking_communicators(std::string* why) {
  if (!config().nccl_inline_launch) {
    *why = "MCRPMPI_NCCL_INLINE_LAUNCH=0";
    return false;
  }
  const char* connect = std::getenv("NCCL_RUNTIME_CONNECT");
  if (connect != nullptr && std::strcmp(connect, "0") == 0) return true;
  if (connect != nullptr) {
    *why = std::string("NCCL_RUNTIME_CONNECT=") + connect + " makes NCCL connect at the first launch, which would "
           "wait for peers on the caller";
  } else {
    *why = "NCCL was loaded before the library loaded it and may have read NCCL_RUNTIME_CONNECT already; set "
           "NCCL_RUNTIME_CONNECT=0 in the environment for blocking communicators";
  }
  return false;
}

}  // namespace

bool nccl_inline_launch() {
  static const bool on = [] {
    if (nccl_api() == nullptr) return false;
    std::string why;
    const bool blocking = blocking_communicators(&why);
    if (!blocking && config().nccl_inline_launch_asked && config().nccl_inline_launch) {
      std::fprintf(stderr, "mcrpmpi: MCRPMPI_NCCL_INLINE_LAUNCH ignored: %s; nonblocking communicators are used\n",
                   why.c_str());
    } else if (config().debug) {
      std::fprintf(stderr, "mcrpmpi: NCCL communicators are %s\n",
                   blocking ? "blocking ones" : ("nonblocking ones (" + why + ")").c_str());
    }
    return blocking;
  }();
  return on;
}

Status nccl_async_error(ncclComm_t comm) {
  const NcclApi& nccl = *nccl_api();
  ncclResult_t async = ncclSuccess;
  if (nccl.CommGetAsyncError(comm, &async) != ncclSuccess || async == ncclSuccess || async == ncclInProgress) {
    return {};
  }
  return Status(MPI_ERR_OTHER, std::string("NCCL reported ") + nccl.GetErrorString(async) + ": " +
                                   nccl.GetLastError(comm));
}

}  // namespace mcrp
