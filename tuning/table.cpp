#include "tuning/table.h"

#include <memory>
#include <utility>

namespace mcrp::tuning {
namespace {

std::shared_ptr<const Table>& table_slot() {
  static std::shared_ptr<const Table> slot = std::make_shared<const Table>(builtin_table());
  return slot;
}

// Does a rule written for `rule` serve a call on `call`? A call of unknown topology (the router did
// not classify its communicator) is served by rules of every class.
bool topology_applies(Topology rule, Topology call) {
  return rule == Topology::any || call == Topology::any || rule == call;
}

// Is `candidate` a better fit than `current` for a call on `call`?
bool fits_better(const Rules& candidate, const Rules* current, Topology call) {
  if (current == nullptr) return true;
  if (candidate.min_comm_size != current->min_comm_size) return candidate.min_comm_size > current->min_comm_size;
  return candidate.topology == call && current->topology != call;
}

class Fnv1a {
 public:
  void add(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      state_ ^= (value >> (8 * i)) & 0xffu;
      state_ *= 0x100000001b3ull;
    }
  }
  std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
};

}  // namespace

Decision Table::lookup(const Query& query) const {
  Decision decision;  // built-in default: nccl over the whole range
  const auto& candidates = per_kind[static_cast<int>(query.kind)];
  const Rules* rules = nullptr;
  int rule_index = -1;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Rules& r = candidates[i];
    if (r.min_comm_size <= query.comm_size && topology_applies(r.topology, query.topology) &&
        fits_better(r, rules, query.topology)) {
      rules = &r;
      rule_index = static_cast<int>(i);
    }
  }
  if (rules == nullptr || rules->ranges.empty()) return decision;
  std::size_t chosen = rules->ranges.size() - 1;
  if (query.bytes != kUnknownSize) {
    for (std::size_t i = 0; i < rules->ranges.size(); ++i) {
      if (query.bytes >= rules->ranges[i].lo && query.bytes < rules->ranges[i].hi) {
        chosen = i;
        break;
      }
    }
  }
  const Range& range = rules->ranges[chosen];
  decision.source = source;
  decision.backend = range.backend;
  decision.range_lo = range.lo;
  decision.range_hi = range.hi;
  decision.rule_index = static_cast<std::int16_t>(rule_index);
  decision.range_index = static_cast<std::int16_t>(chosen);
  return decision;
}

std::uint64_t Table::hash() const {
  Fnv1a h;
  h.add(staged_chunk_bytes);
  h.add(p2p_eager_limit_bytes);
  for (std::uint64_t chunk : own_staged_chunk) h.add(chunk);
  for (int kind = 0; kind < kCollKindCount; ++kind) {
    h.add(static_cast<std::uint64_t>(kind));
    h.add(per_kind[kind].size());
    for (const Rules& rules : per_kind[kind]) {
      h.add(static_cast<std::uint64_t>(rules.min_comm_size));
      h.add(static_cast<std::uint64_t>(rules.topology));
      h.add(rules.ranges.size());
      for (const Range& range : rules.ranges) {
        h.add(range.lo);
        h.add(range.hi);
        h.add(static_cast<std::uint64_t>(range.backend));
      }
    }
  }
  return h.value();
}

Table builtin_table() {
  Table table;
  table.source = Source::builtin;
  table.origin = "built-in table";
  for (auto& rules : table.per_kind) rules.push_back(Rules{1, Topology::any, {Range{0, kUnknownSize, Backend::nccl}}});
  return table;
}

const Table& active_table() { return *table_slot(); }

// Installed once at initialisation, before any routed call; the old table stays alive for any
// reader still holding a reference through shared ownership.
void install_table(Table table) { table_slot() = std::make_shared<const Table>(std::move(table)); }

}  // namespace mcrp::tuning
