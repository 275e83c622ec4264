// The ways a device-buffer collective can run, and what each needs. The router (dispatch.cpp)
// picks one; the choice depends only on what all ranks agree on plus the local memory type.
#pragma once
#include <cstdint>
#include <memory>

#include "collectives/base_call.h"
#include "collectives/call.h"
#include "collectives/layout.h"
#include "device/cuda_runtime.h"
#include "device/status.h"

namespace mcrp {

enum class Path : std::uint8_t {
  mpi,         // host buffers: straight to the base MPI
  staged,      // device buffers through pinned host copies and the base MPI
  nccl,        // device buffers on NCCL
  local_copy,  // one-rank communicator: a device copy, no NCCL communicator
  direct,      // device buffers to a CUDA-aware base MPI as they are: what `staged` becomes there
};
inline constexpr int kPathCount = 5;
const char* path_name(Path path);

// Where device buffers go that only the base MPI can handle: `direct` when it is CUDA-aware (it
// then reads them itself, once prior device work is done), else `staged`.
Path base_mpi_device_path();

// Everything the device paths need about one call, computed once by the router.
struct Prepared {
  const CollCall* call = nullptr;
  Layout layout;
  TypeInfo send_type;
  TypeInfo recv_type;
  Participant self;
  int device = -1;  // CUDA ordinal of the device buffers
  // Where layout.send.base and layout.recv.base are, as the router found them (significant sides
  // only): the device views use them instead of asking the driver again.
  device::PointerInfo send_memory, recv_memory;
};

// Staged: copies device sides to pinned host memory, runs `base` on the copies, copies results
// back. With copy == false (the base MPI is CUDA-aware) it only orders after prior device work.
Status run_staged(const Prepared& prepared, const BaseCall& base, bool copy);

// One-rank communicator: the result is the input, copied where MPI_IN_PLACE does not already
// put it. Needs contiguous datatypes (the router checks).
Status run_local_copy(const Prepared& prepared);

class NcclComm;
Status run_nccl(const Prepared& prepared, std::shared_ptr<NcclComm> comm);

// Nonblocking forms: start the path and put a request that completes it in *request (requests.h).
// The op copies the call, so the Prepared and the wrapper's frame may go away. Staged: copies in
// and waits for them now, then runs `base` (a PMPI_I<coll>) on the host copies; its inner request
// is polled, and the copy back is done before the request completes. NCCL: launched now on the
// communicator's own stream; the request completes when the stream's event has.
Status start_staged(const Prepared& prepared, const BaseCall& base, bool copy, MPI_Request* request);
Status start_nccl(const Prepared& prepared, std::shared_ptr<NcclComm> comm, MPI_Request* request);

}  // namespace mcrp
