// The collectives the library routes, generated from pmpi/collectives.def so that the list of
// entry points and the list of kinds can never drift apart.
#pragma once
#include <cstdint>

namespace mcrp {

enum class CollKind : std::uint8_t {
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) kind,
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
};

inline constexpr int kCollKindCount = 0
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) +1
#include "pmpi/collectives.def"
#undef MCRPMPI_COLLECTIVE
    ;

// "allreduce", "reduce_scatter_block", ...: the names used in environment variables (upper-cased),
// tuning files and reports.
const char* kind_name(CollKind kind);
// "MPI_Allreduce", ...: the blocking entry point's name, for messages.
const char* mpi_name(CollKind kind);
// "MPI_Iallreduce", ...: the nonblocking entry point's name, for what its request reports.
const char* nonblocking_mpi_name(CollKind kind);
// Parses kind_name() output (case-insensitive); returns false when unknown.
bool parse_kind(const char* text, CollKind* kind);

// Reductions combine data with an MPI_Op; the others only move bytes. Inline, as is_rooted below.
constexpr bool is_reduction(CollKind kind) {
  return kind == CollKind::allreduce || kind == CollKind::reduce || kind == CollKind::reduce_scatter ||
         kind == CollKind::reduce_scatter_block || kind == CollKind::scan || kind == CollKind::exscan;
}
// Rooted collectives have buffers that are significant only at (or only away from) the root.
// Inline: the host calls' direct test (collectives/host_direct.h) folds it per entry point.
constexpr bool is_rooted(CollKind kind) {
  return kind == CollKind::reduce || kind == CollKind::bcast || kind == CollKind::gather ||
         kind == CollKind::gatherv || kind == CollKind::scatter || kind == CollKind::scatterv;
}
// The collectives whose staged path is pipelined (collectives/pipeline_shape.h): the reductions that
// cut on element ranges and the data movements that cut on byte ranges of equal blocks. Only they
// have a staged chunk (tuning/table.h).
constexpr bool has_staged_pipeline(CollKind kind) {
  return kind == CollKind::allreduce || kind == CollKind::reduce || kind == CollKind::reduce_scatter_block ||
         kind == CollKind::reduce_scatter || kind == CollKind::bcast || kind == CollKind::allgather;
}

}  // namespace mcrp
