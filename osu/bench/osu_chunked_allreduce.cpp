// osu_chunked_allreduce: MPI_Allreduce (MPI_SUM) done as the library's pipelined staged path asks the
// base MPI for it (collectives/staged_pipeline.cpp): one MPI_Iallreduce per chunk of
// OSU_CHUNK_BYTES (default 1 MiB, the staged_chunk_bytes default), all of them outstanding, then
// MPI_Waitall. On host buffers, without the library, it times the base MPI's half of the pipeline,
// the bound the pipeline meets when the copies are hidden (tests/gpu/measure-figures.sh, `staged`).
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "osu/core/collective.h"

namespace {

long chunk_bytes() {
  static const long bytes = [] {
    const char* set = std::getenv("OSU_CHUNK_BYTES");
    const long asked = set != nullptr ? std::atol(set) : 0;
    return asked > 0 ? asked : 1L << 20;
  }();
  return bytes;
}

void chunked_allreduce(const osu::CallArgs& a) {
  int element = 1;
  MPI_Type_size(a.type, &element);
  const int per_chunk = static_cast<int>(std::max(1L, chunk_bytes() / element));
  const int chunks = a.count == 0 ? 1 : (a.count + per_chunk - 1) / per_chunk;
  std::vector<MPI_Request> requests(static_cast<std::size_t>(chunks));
  for (int k = 0; k < chunks; ++k) {
    const int first = k * per_chunk;
    const std::size_t offset = static_cast<std::size_t>(first) * static_cast<std::size_t>(element);
    MPI_Iallreduce(static_cast<const char*>(a.send) + offset, static_cast<char*>(a.recv) + offset,
                   std::min(per_chunk, a.count - first), a.type, MPI_SUM, a.comm, &requests[static_cast<std::size_t>(k)]);
  }
  MPI_Waitall(chunks, requests.data(), MPI_STATUSES_IGNORE);
}

const osu::CollectiveSpec kSpec{"Chunked Allreduce", osu::Shape::all_reduce, chunked_allreduce, nullptr};

}  // namespace

OSU_COLLECTIVE_MAIN(kSpec)
