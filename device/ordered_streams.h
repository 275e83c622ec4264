// One library-owned stream per device for copies that are not tied to an NCCL communicator
// (staging, one-rank copies). Created on first use; ordered after the legacy default stream.
#pragma once
#include <cuda_runtime_api.h>

#include "device/status.h"

namespace mcrp::device {

Status copy_stream(int device, cudaStream_t* stream);

}  // namespace mcrp::device
