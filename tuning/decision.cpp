#include "tuning/decision.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "tuning/table.h"

namespace mcrp::tuning {
namespace {

enum class Override : std::uint8_t { none, nccl, mpi };
Override g_env_overrides[kCollKindCount] = {};
Override g_forced[kCollKindCount] = {};
constexpr long long kNotForced = -1;
std::atomic<long long> g_forced_eager_limit{kNotForced};
std::atomic<long long> g_forced_chunk{kNotForced};
// Per collective, the forced chunk + 1, so that the zero every slot starts with means "not forced".
std::atomic<std::uint64_t> g_forced_own_chunk_plus_one[kCollKindCount] = {};

long long forced_bytes(std::optional<std::uint64_t> bytes) {
  return bytes ? static_cast<long long>(*bytes) : kNotForced;
}

Override to_override(std::optional<Backend> backend) {
  if (!backend) return Override::none;
  return *backend == Backend::nccl ? Override::nccl : Override::mpi;
}

Backend to_backend(Override o) { return o == Override::nccl ? Backend::nccl : Backend::mpi; }

// "MCRPMPI_ALLREDUCE" for allreduce, into a fixed buffer (used on the per-call debug path).
void variable_name(CollKind kind, char* out, std::size_t size) {
  int n = std::snprintf(out, size, "MCRPMPI_");
  for (const char* c = kind_name(kind); *c != '\0' && n + 1 < static_cast<int>(size); ++c) {
    out[n++] = static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  out[n] = '\0';
}

// "64 KiB", "3 B", "inf": sizes in messages, exact where they are powers of 1024.
void format_bytes(std::uint64_t bytes, char* out, std::size_t size) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes == kUnknownSize) {
    std::snprintf(out, size, "inf");
    return;
  }
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  std::snprintf(out, size, "%llu %s", static_cast<unsigned long long>(bytes), kUnits[unit]);
}

}  // namespace

const char* backend_name(Backend backend) { return backend == Backend::nccl ? "nccl" : "mpi"; }

bool parse_backend(const char* text, Backend* backend) {
  if (std::strcmp(text, "nccl") == 0) {
    *backend = Backend::nccl;
  } else if (std::strcmp(text, "mpi") == 0) {
    *backend = Backend::mpi;
  } else {
    return false;
  }
  return true;
}

const char* topology_name(Topology topology) {
  switch (topology) {
    case Topology::single_node: return "single_node";
    case Topology::multi_node: return "multi_node";
    case Topology::any: break;
  }
  return "any";
}

bool parse_topology(const char* text, Topology* topology) {
  for (Topology t : {Topology::any, Topology::single_node, Topology::multi_node}) {
    if (std::strcmp(text, topology_name(t)) == 0) {
      *topology = t;
      return true;
    }
  }
  return false;
}

const char* source_name(Source source) {
  switch (source) {
    case Source::env_override: return "environment override";
    case Source::tuning_file: return "tuning file";
    case Source::forced: return "forced by the tuning suite";
    case Source::builtin: break;
  }
  return "built-in table";
}

void load_settings() {
  for (int i = 0; i < kCollKindCount; ++i) {
    char variable[64];
    variable_name(static_cast<CollKind>(i), variable, sizeof variable);
    const char* value = std::getenv(variable);
    g_env_overrides[i] = Override::none;
    if (value == nullptr || std::strcmp(value, "auto") == 0 || value[0] == '\0') continue;
    Backend backend;
    if (parse_backend(value, &backend)) {
      g_env_overrides[i] = to_override(backend);
    } else {
      std::fprintf(stderr, "mcrpmpi: ignoring %s=%s (expected nccl, mpi or auto)\n", variable, value);
    }
  }
}

void force_backend(CollKind kind, std::optional<Backend> backend) {
  g_forced[static_cast<int>(kind)] = to_override(backend);
}

std::uint64_t p2p_eager_limit() {
  const long long forced = g_forced_eager_limit.load(std::memory_order_acquire);
  return forced == kNotForced ? active_table().p2p_eager_limit_bytes : static_cast<std::uint64_t>(forced);
}

void force_p2p_eager_limit(std::optional<std::uint64_t> bytes) {
  g_forced_eager_limit.store(forced_bytes(bytes), std::memory_order_release);
}

std::uint64_t staged_chunk_bytes() {
  const long long forced = g_forced_chunk.load(std::memory_order_acquire);
  return forced == kNotForced ? active_table().staged_chunk_bytes : static_cast<std::uint64_t>(forced);
}

void force_staged_chunk_bytes(std::optional<std::uint64_t> bytes) {
  g_forced_chunk.store(forced_bytes(bytes), std::memory_order_release);
}

std::uint64_t staged_chunk_bytes(CollKind kind) {
  const std::uint64_t own = g_forced_own_chunk_plus_one[static_cast<int>(kind)].load(std::memory_order_acquire);
  if (own != 0) return own - 1;
  const long long forced = g_forced_chunk.load(std::memory_order_acquire);
  return forced == kNotForced ? active_table().staged_chunk_for(kind) : static_cast<std::uint64_t>(forced);
}

void force_staged_chunk_bytes(CollKind kind, std::optional<std::uint64_t> bytes) {
  g_forced_own_chunk_plus_one[static_cast<int>(kind)].store(bytes ? *bytes + 1 : 0, std::memory_order_release);
}

Decision decide(const Query& query) {
  const int k = static_cast<int>(query.kind);
  for (auto [slot, source] : {std::pair{g_forced[k], Source::forced}, std::pair{g_env_overrides[k], Source::env_override}}) {
    if (slot != Override::none) {
      Decision decision;
      decision.backend = to_backend(slot);
      decision.source = source;
      return decision;
    }
  }
  return active_table().lookup(query);
}

const char* describe_decision(const Query& query, const Decision& decision, char* out, std::size_t size) {
  char bytes[32], lo[32], hi[32], rule[160];
  format_bytes(query.bytes, bytes, sizeof bytes);
  format_bytes(decision.range_lo, lo, sizeof lo);
  format_bytes(decision.range_hi, hi, sizeof hi);
  switch (decision.source) {
    case Source::env_override: variable_name(query.kind, rule, sizeof rule); break;
    case Source::forced: std::snprintf(rule, sizeof rule, "force_backend()"); break;
    case Source::tuning_file:
      std::snprintf(rule, sizeof rule, "%s: collectives.%s[%d].ranges[%d] [%s, %s)", active_table().origin.c_str(),
                    kind_name(query.kind), decision.rule_index, decision.range_index, lo, hi);
      break;
    case Source::builtin: std::snprintf(rule, sizeof rule, "default rule [%s, %s)", lo, hi); break;
  }
  std::snprintf(out, size, "%s %s, %d ranks, %s -> %s by %s %s", kind_name(query.kind), bytes, query.comm_size,
                topology_name(query.topology), backend_name(decision.backend), source_name(decision.source), rule);
  return out;
}

}  // namespace mcrp::tuning

extern "C" int mcrpmpi_force_backend(int kind, int backend) {
  using namespace mcrp::tuning;
  if (kind < 0 || kind >= mcrp::kCollKindCount || backend < -1 || backend > 1) return -1;
  std::optional<Backend> chosen;
  if (backend >= 0) chosen = backend == 0 ? Backend::nccl : Backend::mpi;
  force_backend(static_cast<mcrp::CollKind>(kind), chosen);
  return 0;
}

namespace {

// A C hook's byte count as the setters take it: negative means back to the table (nullopt); false
// for one above `max_bytes`, which is refused.
bool forced_from_c(long long bytes, std::uint64_t max_bytes, std::optional<std::uint64_t>* forced) {
  if (bytes >= 0 && static_cast<std::uint64_t>(bytes) > max_bytes) return false;
  *forced = bytes < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(bytes));
  return true;
}

int force_from_c(long long bytes, std::uint64_t max_bytes, void (*force)(std::optional<std::uint64_t>)) {
  std::optional<std::uint64_t> forced;
  if (!forced_from_c(bytes, max_bytes, &forced)) return -1;
  force(forced);
  return 0;
}

}  // namespace

extern "C" int mcrpmpi_force_p2p_eager_limit(long long bytes) {
  using namespace mcrp::tuning;
  return force_from_c(bytes, kMaxP2pEagerLimitBytes, force_p2p_eager_limit);
}

extern "C" int mcrpmpi_force_staged_chunk_bytes(long long bytes) {
  using namespace mcrp::tuning;
  return force_from_c(bytes, kMaxStagedChunkBytes, force_staged_chunk_bytes);
}

extern "C" int mcrpmpi_force_own_staged_chunk_bytes(int kind, long long bytes) {
  using namespace mcrp::tuning;
  std::optional<std::uint64_t> forced;
  if (kind < 0 || kind >= mcrp::kCollKindCount || !has_staged_pipeline(static_cast<mcrp::CollKind>(kind)) ||
      !forced_from_c(bytes, kMaxStagedChunkBytes, &forced)) {
    return -1;
  }
  force_staged_chunk_bytes(static_cast<mcrp::CollKind>(kind), forced);
  return 0;
}
