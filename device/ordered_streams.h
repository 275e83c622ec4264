// One library-owned stream per device for copies that are not tied to an NCCL communicator
// (staging, one-rank copies). Created on first use; ordered after the legacy default stream.
#pragma once
#include <cuda_runtime_api.h>

#include "device/status.h"

namespace mcrp::device {

Status copy_stream(int device, cudaStream_t* stream);
// A second such stream, for copies back to the device that should overlap with copies on
// copy_stream (a GPU copies both directions at once); the pipelined staged path uses it.
Status copy_back_stream(int device, cudaStream_t* stream);

}  // namespace mcrp::device
