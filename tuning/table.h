// A threshold table: per collective, sorted message-size ranges each naming a backend, specialised by
// communicator size and topology class. The built-in table is used until a tuning file replaces it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tuning/decision.h"

namespace mcrp::tuning {

struct Range {
  std::uint64_t lo = 0;             // inclusive
  std::uint64_t hi = kUnknownSize;  // exclusive; kUnknownSize means "and above"
  Backend backend = Backend::nccl;
};

// The rules for one collective at communicator sizes >= min_comm_size and one topology class.
// Among the rules that apply to a call, the one with the largest min_comm_size wins; at equal
// min_comm_size a rule for the call's exact topology beats an "any" rule.
struct Rules {
  int min_comm_size = 1;
  Topology topology = Topology::any;
  std::vector<Range> ranges;  // sorted, contiguous, covering [0, kUnknownSize)
};

// The staged path's pipeline chunk (docs/collectives.md, "The staged path"): big enough that the per-chunk cost
// (a copy call, an event and a base-MPI call, ~10-20 us on a GPU) is small next to the chunk's copy
// time, small enough that copies and the host collective overlap from a few MiB on.
inline constexpr std::uint64_t kDefaultStagedChunkBytes = 1 << 20;
// No chunk is that large; the bound keeps rank 0's override within the signed 64-bit integers it is
// broadcast in (shared_table.cpp).
inline constexpr std::uint64_t kMaxStagedChunkBytes = std::uint64_t{1} << 62;
// A collective without a chunk of its own (Table::own_staged_chunk) takes staged_chunk_bytes.
inline constexpr std::uint64_t kNoOwnChunk = ~std::uint64_t{0};

// Device-only point-to-point (docs/point-to-point.md, "Device-only communicators"): payloads up to this size travel
// inside the matching header. Every rank must use the same value, since a receive is posted for the
// largest header a sender may send; it therefore lives in the table that rank 0 shares at MPI_Init.
inline constexpr std::uint64_t kDefaultP2pEagerLimitBytes = 64 << 10;
// Every posted receive on such a communicator holds a pinned buffer of header + limit bytes, so a
// larger limit is refused as a mistake rather than honoured.
inline constexpr std::uint64_t kMaxP2pEagerLimitBytes = 1 << 30;

class MCRPMPI_TUNING_API Table {
 public:
  Source source = Source::builtin;
  std::string origin;  // the file a tuning table came from, for messages
  std::array<std::vector<Rules>, kCollKindCount> per_kind;
  // Bytes per chunk of a pipelined staged collective; 0 turns pipelining off. Tuning file field
  // "staged_chunk_bytes", replaced by MCRPMPI_STAGED_CHUNK_BYTES as rank 0 read it (shared_table.h).
  std::uint64_t staged_chunk_bytes = kDefaultStagedChunkBytes;
  // A pipelined collective's own chunk, where the base MPI's algorithms make another size better for
  // it than for the rest (on the H200, reduce_scatter ran 1.5-1.7x its bound with the chunk that suited
  // allreduce); kNoOwnChunk elsewhere. Tuning file object "staged_chunk_bytes_by_collective" (keyed by
  // collective name); MCRPMPI_STAGED_CHUNK_BYTES replaces them all with its one chunk.
  std::array<std::uint64_t, kCollKindCount> own_staged_chunk = no_own_chunks();
  // Largest payload sent inline on a device-only communicator (p2p/engine.h). Tuning file field
  // "p2p_eager_limit_bytes", replaced by MCRPMPI_P2P_EAGER_LIMIT as rank 0 read it.
  std::uint64_t p2p_eager_limit_bytes = kDefaultP2pEagerLimitBytes;

  // Finds the range holding query.bytes; unknown sizes use the last (largest) range. When no rule
  // applies (the file has none for this collective or size), the built-in default is returned.
  // Allocates nothing.
  Decision lookup(const Query& query) const;

  // FNV-1a over the rules and sizes (not the origin or source): equal hashes mean equal routing.
  std::uint64_t hash() const;

  // The chunk a pipelined staged `kind` is cut into: its own, else staged_chunk_bytes.
  std::uint64_t staged_chunk_for(CollKind kind) const {
    const std::uint64_t own = own_staged_chunk[static_cast<int>(kind)];
    return own == kNoOwnChunk ? staged_chunk_bytes : own;
  }

 private:
  static std::array<std::uint64_t, kCollKindCount> no_own_chunks() {
    std::array<std::uint64_t, kCollKindCount> chunks;
    chunks.fill(kNoOwnChunk);
    return chunks;
  }
};

// A byte count of the table set by one top-level key of the tuning file and overridden by one
// environment variable on rank 0 (shared_table.h); the file writer omits it at its default.
struct ByteSetting {
  const char* file_key;
  const char* variable;
  std::uint64_t Table::*field;
  std::uint64_t default_bytes;
  std::uint64_t max_bytes;  // larger values are refused, in the file and in the environment
};

inline constexpr ByteSetting kByteSettings[] = {
    {"staged_chunk_bytes", "MCRPMPI_STAGED_CHUNK_BYTES", &Table::staged_chunk_bytes, kDefaultStagedChunkBytes,
     kMaxStagedChunkBytes},
    {"p2p_eager_limit_bytes", "MCRPMPI_P2P_EAGER_LIMIT", &Table::p2p_eager_limit_bytes, kDefaultP2pEagerLimitBytes,
     kMaxP2pEagerLimitBytes},
};

// Every collective on NCCL at every size: NCCL wins or ties on device buffers in the measurements
// peers publish, and the tuning suite (mcrpmpi-tune) writes machine-specific tables that refine it.
MCRPMPI_TUNING_API Table builtin_table();

// The table in force; the built-in one unless install_table() replaced it.
MCRPMPI_TUNING_API const Table& active_table();
MCRPMPI_TUNING_API void install_table(Table table);

}  // namespace mcrp::tuning
