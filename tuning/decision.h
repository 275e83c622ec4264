// The one interface through which the router asks "NCCL or the base MPI?" for a device-buffer call.
// Inputs are only what every rank of the call agrees on (collective, agreed message size, communicator
// size and topology class), so every rank gets the same answer. Precedence: MCRPMPI_<COLLECTIVE> env
// override (or force_backend()), then the tuning table in force (a tuning file when one is loaded,
// identical on every rank), then the built-in table.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "collectives/kind.h"

// The functions the tuning suite reaches inside libmcrpmpi stay visible even when the library hides
// its other symbols.
#define MCRPMPI_TUNING_API __attribute__((visibility("default")))

namespace mcrp::tuning {

enum class Backend : std::uint8_t { nccl, mpi };
MCRPMPI_TUNING_API const char* backend_name(Backend backend);
// "nccl" or "mpi"; false otherwise.
MCRPMPI_TUNING_API bool parse_backend(const char* text, Backend* backend);

// Where a communicator's ranks live. `any` in a Query means "not classified" (every rule applies);
// in a rule it means "whatever the topology".
enum class Topology : std::uint8_t { any, single_node, multi_node };
MCRPMPI_TUNING_API const char* topology_name(Topology topology);
MCRPMPI_TUNING_API bool parse_topology(const char* text, Topology* topology);

// Message sizes are bytes per rank as OSU reports them (see README "How a call is routed").
inline constexpr std::uint64_t kUnknownSize = std::numeric_limits<std::uint64_t>::max();

struct Query {
  CollKind kind = CollKind::allreduce;
  std::uint64_t bytes = 0;  // kUnknownSize where the ranks do not agree on one (alltoallv, gatherv, scatterv)
  int comm_size = 1;
  Topology topology = Topology::any;  // fill with classify_topology(comm), computed once per communicator
};

enum class Source : std::uint8_t { env_override, tuning_file, builtin, forced };
MCRPMPI_TUNING_API const char* source_name(Source source);

struct Decision {
  Backend backend = Backend::nccl;
  Source source = Source::builtin;
  std::uint64_t range_lo = 0;  // the rule's message-size range [lo, hi), for logs
  std::uint64_t range_hi = kUnknownSize;
  std::int16_t rule_index = -1;   // tuning file: collectives.<kind>[rule_index].ranges[range_index]
  std::int16_t range_index = -1;
};

// Allocation-free; safe to call from any thread after load_settings().
MCRPMPI_TUNING_API Decision decide(const Query& query);

// Writes one line naming the rule that decided (for MCRPMPI_DEBUG=1), e.g.
// "allreduce 4096 B, 4 ranks, single_node -> mpi by tuning file /x.json: collectives.allreduce[0].ranges[1]
// [0 B, 64 KiB)". Allocation-free; truncates to `size`. Returns `out`.
MCRPMPI_TUNING_API const char* describe_decision(const Query& query, const Decision& decision, char* out,
                                                 std::size_t size);

// Reads MCRPMPI_<COLLECTIVE> overrides (nccl|mpi|auto). Called once at the first routed call;
// unknown values are reported on stderr and treated as auto.
MCRPMPI_TUNING_API void load_settings();

// Collective over `world` (every rank calls it, right after PMPI_Init): rank 0 reads the tuning file
// (MCRPMPI_TUNING_FILE, else the installed default), broadcasts its text, and every rank parses the
// same text, so all ranks install the same table or all keep the built-in one. A missing default
// file is silent; a bad file is reported once (by rank 0) and ignored. Also calls load_settings().
// Never throws; returns MPI_SUCCESS or the error of a failed broadcast.
MCRPMPI_TUNING_API int initialize(MPI_Comm world) noexcept;

// Forces one collective onto a backend (std::nullopt: back to the table), above every other rule.
// For the tuning suite, which measures each path in turn. Not meant for concurrent use with decide().
MCRPMPI_TUNING_API void force_backend(CollKind kind, std::optional<Backend> backend);

// The eager limit of device-only point-to-point (table.h) for an engine made now: the forced one
// (force_p2p_eager_limit) if any, else the table's.
MCRPMPI_TUNING_API std::uint64_t p2p_eager_limit();

// Forces the eager limit of engines made after the call (std::nullopt: back to the table). For the
// tuning suite, which measures inline and rendezvous transfers in turn. Process-local: every rank of a
// communicator must force the same value before the communicator gets its engine (a receive is posted
// for the largest header its peers may send), as mcrpmpi-tune does on every rank.
MCRPMPI_TUNING_API void force_p2p_eager_limit(std::optional<std::uint64_t> bytes);

// The chunk of the pipelined staged path (table.h) for a call started now: the forced one
// (force_staged_chunk_bytes) if any, else the table's.
MCRPMPI_TUNING_API std::uint64_t staged_chunk_bytes();

// Forces the chunk of pipelined staged calls started after it (std::nullopt: back to the table). For
// the tuning suite, which times the staged path at several chunks in turn. Process-local: ranks cut a
// call into chunks alike only when every rank of the communicator forces the same value between the
// same two calls, as mcrpmpi-tune does on every rank.
MCRPMPI_TUNING_API void force_staged_chunk_bytes(std::optional<std::uint64_t> bytes);

// The chunk of a pipelined staged `kind` started now: the one forced for that collective, else the
// one forced for all, else the table's for it (Table::staged_chunk_for). Point-to-point's staged
// channel takes staged_chunk_bytes() above.
MCRPMPI_TUNING_API std::uint64_t staged_chunk_bytes(CollKind kind);

// Forces one collective's chunk, above the chunk forced for all (std::nullopt: back to that or the
// table). For the tuning suite, which gives each collective the chunk it chose; process-local like
// force_staged_chunk_bytes.
MCRPMPI_TUNING_API void force_staged_chunk_bytes(CollKind kind, std::optional<std::uint64_t> bytes);

}  // namespace mcrp::tuning

// The same as force_backend, with C linkage so that mcrpmpi-tune can find it with dlsym in the loaded
// libmcrpmpi (linked or preloaded): kind is a CollKind value, backend 0 = nccl, 1 = mpi, -1 = the table.
// Returns 0, or -1 for an out-of-range argument.
extern "C" MCRPMPI_TUNING_API int mcrpmpi_force_backend(int kind, int backend);

// The same as force_p2p_eager_limit, with C linkage for mcrpmpi-tune: bytes >= 0 forces that limit,
// a negative value goes back to the table. Returns 0, or -1 (and changes nothing) above the largest
// limit the table accepts (kMaxP2pEagerLimitBytes).
extern "C" MCRPMPI_TUNING_API int mcrpmpi_force_p2p_eager_limit(long long bytes);

// The same as force_staged_chunk_bytes, with C linkage for mcrpmpi-tune: bytes >= 0 forces that chunk
// (0: unpipelined), a negative value goes back to the table. Returns 0, or -1 (and changes nothing)
// above the largest chunk the table accepts (kMaxStagedChunkBytes).
extern "C" MCRPMPI_TUNING_API int mcrpmpi_force_staged_chunk_bytes(long long bytes);

// The same as force_staged_chunk_bytes(kind, bytes), with C linkage for mcrpmpi-tune: kind is a CollKind
// value whose staged path is pipelined (has_staged_pipeline). Returns 0, or -1 (and changes nothing)
// for another kind or a chunk above kMaxStagedChunkBytes.
extern "C" MCRPMPI_TUNING_API int mcrpmpi_force_own_staged_chunk_bytes(int kind, long long bytes);
