// How a pipelined staged collective (or a staged point-to-point payload, p2p/chunked_transfer.h)
// cuts its data into chunks. Pure arithmetic on what every rank of the call agrees on -- the bytes of one row (the per-rank block, or the whole buffer), the unit a
// boundary must respect (a reduction's element size; 16 bytes for data movement) and the chunk
// setting (tuning table or MCRPMPI_STAGED_CHUNK_BYTES as rank 0 read it) -- never on local memory
// state, so every rank issues the same sequence of base-MPI calls.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mcrp {

// Data-movement chunks are raw bytes (MPI_BYTE); their boundaries fall on multiples of this, which
// every predefined type of a power-of-two size divides.
inline constexpr std::uint64_t kMovementUnit = 16;
// At most this many chunks per call (the chunk grows instead): bounds the base MPI's outstanding
// requests when the setting is tiny next to the message.
inline constexpr int kMaxChunks = 1024;

struct ByteRange {
  std::size_t lo = 0;
  std::size_t hi = 0;
  std::size_t bytes() const { return hi - lo; }
};

struct ChunkPlan {
  std::size_t row_bytes = 0;
  std::size_t chunk_bytes = 0;  // a multiple of the unit; the last chunk may be shorter
  int chunks = 0;

  // Chunk k of every row: [k * chunk_bytes, min(row_bytes, (k + 1) * chunk_bytes)).
  ByteRange chunk(int k) const;
  bool pipelined() const { return chunks >= 2; }
};

// chunks == 0 when row_bytes is 0, 1 when the row fits in one chunk or setting_bytes is 0 (off).
// row_bytes must be a multiple of unit_bytes for reductions; unit_bytes > 0.
ChunkPlan plan_chunks(std::uint64_t row_bytes, std::uint64_t unit_bytes, std::uint64_t setting_bytes);

}  // namespace mcrp
