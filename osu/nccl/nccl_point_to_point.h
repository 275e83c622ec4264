// The raw-NCCL reference's point-to-point: ncclSend/ncclRecv on device buffers with the same
// ping-pong, window and validation as osu_latency, osu_bw, osu_bibw and osu_multi_lat.
#pragma once
#include <memory>

#include "osu/core/point_to_point.h"

namespace osu::nccl {

std::unique_ptr<Transport> nccl_transport(const Options& options);

}  // namespace osu::nccl
