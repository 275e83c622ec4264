// NCCL, loaded at run time (dlopen of MCRPMPI_NCCL_LIBRARY, default libnccl.so.2) so that the library
// loads and passes everything through on machines without NCCL. The collectives added in NCCL 2.28
// (AlltoAll, Gather, Scatter) are optional: when absent, grouped send/recv does their work.
#pragma once
#include <nccl.h>

#include <string>

#include "device/status.h"

namespace mcrp {

struct NcclApi {
  decltype(&ncclGetVersion) GetVersion = nullptr;
  decltype(&ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&ncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&ncclCommFinalize) CommFinalize = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclCommAbort) CommAbort = nullptr;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&ncclGetErrorString) GetErrorString = nullptr;
  decltype(&ncclGetLastError) GetLastError = nullptr;
  decltype(&ncclAllReduce) AllReduce = nullptr;
  decltype(&ncclReduce) Reduce = nullptr;
  decltype(&ncclBroadcast) Broadcast = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&ncclSend) Send = nullptr;
  decltype(&ncclRecv) Recv = nullptr;
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
  // Optional (NCCL >= 2.28).
  decltype(&ncclCommRevoke) CommRevoke = nullptr;
  decltype(&ncclAlltoAll) AlltoAll = nullptr;
  decltype(&ncclGather) Gather = nullptr;
  decltype(&ncclScatter) Scatter = nullptr;
  int version = 0;
};

// The loaded API, or null when NCCL cannot be loaded; nccl_load_error() then says why.
const NcclApi* nccl_api();

// An NCCL group closed on every path: a group left open by a failed call inside it (an early return)
// makes every later NCCL call of the thread, on any communicator, wait for a GroupEnd that never
// comes, so those calls end only at MCRPMPI_NCCL_TIMEOUT.
class NcclGroup {
 public:
  explicit NcclGroup(const NcclApi& nccl) : nccl_(nccl) {}
  ~NcclGroup() {
    if (open_) nccl_.GroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  ncclResult_t start() {
    const ncclResult_t rc = nccl_.GroupStart();
    open_ = rc == ncclSuccess || rc == ncclInProgress;
    return rc;
  }
  ncclResult_t end() {
    open_ = false;
    return nccl_.GroupEnd();
  }

 private:
  const NcclApi& nccl_;
  bool open_ = false;
};
const std::string& nccl_load_error();

// Whether NCCL communicators are blocking ones launched on the caller (runtime/nccl_comm.h):
// MCRPMPI_NCCL_INLINE_LAUNCH unset or 1 (the default), and NCCL connects the collectives' peers while
// a communicator is set up. Loading NCCL sets NCCL_RUNTIME_CONNECT=0 for that when the setting is on
// and the variable unset; set to anything else, collectives would connect at their first launch,
// waiting for peers on the caller, so the communicators are then nonblocking ones (with a message
// only when MCRPMPI_NCCL_INLINE_LAUNCH=1 was asked for).
bool nccl_inline_launch();

// A failure NCCL reports asynchronously on `comm` (a peer died, a network error): how a stuck
// operation shows up while the library polls, instead of as an event that never completes. OK while
// the communicator is fine or still in progress. Needs nccl_api().
Status nccl_async_error(ncclComm_t comm);

}  // namespace mcrp
