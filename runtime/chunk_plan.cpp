#include "runtime/chunk_plan.h"

#include <algorithm>

namespace mcrp {

ByteRange ChunkPlan::chunk(int k) const {
  const std::size_t lo = static_cast<std::size_t>(k) * chunk_bytes;
  return ByteRange{lo, std::min(row_bytes, lo + chunk_bytes)};
}

ChunkPlan plan_chunks(std::uint64_t row_bytes, std::uint64_t unit_bytes, std::uint64_t setting_bytes) {
  ChunkPlan plan;
  plan.row_bytes = static_cast<std::size_t>(row_bytes);
  if (row_bytes == 0 || unit_bytes == 0) return plan;
  const std::uint64_t units = (row_bytes + unit_bytes - 1) / unit_bytes;
  if (setting_bytes == 0) {
    plan.chunk_bytes = static_cast<std::size_t>(units * unit_bytes);
    plan.chunks = 1;
    return plan;
  }
  const std::uint64_t fewest = (units + kMaxChunks - 1) / kMaxChunks;  // units per chunk under the cap
  const std::uint64_t per_chunk = std::max({std::uint64_t{1}, setting_bytes / unit_bytes, fewest});
  plan.chunk_bytes = static_cast<std::size_t>(per_chunk * unit_bytes);
  plan.chunks = static_cast<int>((units + per_chunk - 1) / per_chunk);
  return plan;
}

}  // namespace mcrp
