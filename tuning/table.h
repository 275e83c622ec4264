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

class MCRPMPI_TUNING_API Table {
 public:
  Source source = Source::builtin;
  std::string origin;  // the file a tuning table came from, for messages
  std::array<std::vector<Rules>, kCollKindCount> per_kind;

  // Finds the range holding query.bytes; unknown sizes use the last (largest) range. When no rule
  // applies (the file has none for this collective or size), the built-in default is returned.
  // Allocates nothing.
  Decision lookup(const Query& query) const;

  // FNV-1a over the rules (not the origin or source): equal hashes mean equal routing.
  std::uint64_t hash() const;
};

// Every collective on NCCL at every size: NCCL wins or ties on device buffers in the measurements
// peers publish, and the tuning suite (mcrpmpi-tune) writes machine-specific tables that refine it.
MCRPMPI_TUNING_API Table builtin_table();

// The table in force; the built-in one unless install_table() replaced it.
MCRPMPI_TUNING_API const Table& active_table();
MCRPMPI_TUNING_API void install_table(Table table);

}  // namespace mcrp::tuning
