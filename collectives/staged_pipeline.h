// The pipelined staged path: a large staged collective in chunks (docs/collectives.md, "The staged path").
// Chunk k+1 is copied device-to-host on one stream while the base MPI's nonblocking collective runs
// on chunk k, and each chunk's result is copied back on a second stream as soon as its collective
// completes. Below one chunk, and for what it does not cover, the unpipelined staged path runs
// (collectives/staged.cpp), with its one copy each way.
//
// Every chunk's base call is started inside the MPI call itself, in chunk order: a chunk started
// later from progress could land, on one rank, after a collective the application issues next on
// the same communicator, and before it on another, and the base MPI would match them crosswise.
// What continues after the call (nonblocking and persistent forms) is testing the chunks and
// copying results back, driven by the generalized request's polls without ever blocking there.
#pragma once
#include <mpi.h>

#include <memory>

#include "collectives/paths.h"

namespace mcrp {

class PipelinedCall;
struct PipelinedCallDeleter {
  void operator()(PipelinedCall* call) const;
};
using PipelinedCallPtr = std::unique_ptr<PipelinedCall, PipelinedCallDeleter>;

// The call as a pipeline, or null when it is not pipelined (pipeline_shape.h says when), chunked by
// the tuning table's staged_chunk_bytes (MCRPMPI_STAGED_CHUNK_BYTES).
PipelinedCallPtr plan_pipelined(const Prepared& prepared);

// Blocking: returns with the result in the user's buffers.
Status run_pipelined(PipelinedCallPtr call);
// Nonblocking: every chunk started, *request completes once every result is back (requests.h).
Status start_pipelined(PipelinedCallPtr call, MPI_Request* request);

}  // namespace mcrp

// Exported for tests, found with dlsym: how many chunks this process has started on the pipelined
// path so far (each a nonblocking base-MPI collective).
extern "C" __attribute__((visibility("default"))) long long mcrpmpi_staged_pipeline_chunks();
