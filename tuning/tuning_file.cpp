#include "tuning/tuning_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <exception>
#include <set>
#include <utility>

namespace mcrp::tuning {
namespace {

// ordered: files are written, and their problems reported, in the order a reader sees them.
using json = nlohmann::ordered_json;

// A semantic problem at a JSON path; caught once at the top of parse_tuning_file.
struct FileError {
  std::string path;
  std::string what;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw FileError{path, what}; }

void reject_unknown_keys(const json& object, const std::string& path, std::initializer_list<const char*> known) {
  for (const auto& item : object.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return item.key() == k; })) {
      fail(path + "." + item.key(), "unknown field");
    }
  }
}

const json& member(const json& object, const std::string& path, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) fail(path, std::string("missing field \"") + key + "\"");
  return *it;
}

std::uint64_t byte_count(const json& value, const std::string& path) {
  if (!value.is_number_unsigned()) fail(path, "expected a non-negative integer number of bytes");
  return value.get<std::uint64_t>();
}

// A byte count no larger than `max_bytes`.
std::uint64_t bounded_byte_count(const json& value, const std::string& path, std::uint64_t max_bytes) {
  const std::uint64_t bytes = byte_count(value, path);
  if (bytes > max_bytes) fail(path, "expected at most " + std::to_string(max_bytes) + " bytes");
  return bytes;
}

// The top-level byte counts (table.h, kByteSettings); absent ones keep their defaults.
void parse_byte_settings(const json& doc, Table* table) {
  for (const ByteSetting& setting : kByteSettings) {
    auto it = doc.find(setting.file_key);
    if (it != doc.end()) table->*setting.field = bounded_byte_count(*it, setting.file_key, setting.max_bytes);
  }
}

constexpr const char* kOwnChunksKey = "staged_chunk_bytes_by_collective";

// {"reduce_scatter": 4194304, ...}: the pipelined collectives' own chunks (Table::own_staged_chunk).
void parse_own_chunks(const json& doc, Table* table) {
  auto it = doc.find(kOwnChunksKey);
  if (it == doc.end()) return;
  if (!it->is_object()) fail(kOwnChunksKey, "expected an object keyed by collective name");
  for (const auto& item : it->items()) {
    const std::string path = std::string(kOwnChunksKey) + "." + item.key();
    CollKind kind;
    if (!parse_kind(item.key().c_str(), &kind)) fail(path, "unknown collective \"" + item.key() + "\"");
    if (!has_staged_pipeline(kind)) fail(path, "this collective's staged path is not pipelined: no chunk to set");
    table->own_staged_chunk[static_cast<int>(kind)] = bounded_byte_count(item.value(), path, kMaxStagedChunkBytes);
  }
}

Range parse_range(const json& value, const std::string& path) {
  if (!value.is_object()) fail(path, "expected an object {\"from\", \"to\", \"path\"}");
  reject_unknown_keys(value, path, {"from", "to", "path"});
  Range range;
  range.lo = byte_count(member(value, path, "from"), path + ".from");
  const json& to = member(value, path, "to");
  range.hi = to.is_null() ? kUnknownSize : byte_count(to, path + ".to");
  const json& backend = member(value, path, "path");
  if (!backend.is_string() || !parse_backend(backend.get<std::string>().c_str(), &range.backend)) {
    fail(path + ".path", "expected \"nccl\" or \"mpi\"");
  }
  if (range.hi <= range.lo) fail(path, "empty range: \"to\" must be above \"from\" (or null)");
  return range;
}

// Ranges must tile [0, inf) in order, so that every size has exactly one rule.
void check_tiling(const std::vector<Range>& ranges, const std::string& path) {
  if (ranges.empty()) fail(path, "no ranges");
  if (ranges.front().lo != 0) fail(path + "[0].from", "the first range must start at 0");
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const Range& prev = ranges[i - 1];
    if (ranges[i].lo < prev.lo) fail(at, "ranges are not sorted by \"from\"");
    if (ranges[i].lo < prev.hi) fail(at, "overlaps the previous range (which ends at " + std::to_string(prev.hi) + ")");
    if (ranges[i].lo > prev.hi) fail(at, "leaves a gap after the previous range (which ends at " + std::to_string(prev.hi) + ")");
  }
  if (ranges.back().hi != kUnknownSize) fail(path + "[" + std::to_string(ranges.size() - 1) + "].to", "the last range must end with null (no upper bound)");
}

Rules parse_rules(const json& value, const std::string& path) {
  if (!value.is_object()) fail(path, "expected an object {\"comm_size\", \"topology\", \"ranges\"}");
  reject_unknown_keys(value, path, {"comm_size", "topology", "ranges"});
  Rules rules;
  const json& size = member(value, path, "comm_size");
  if (!size.is_number_integer() || size.get<std::int64_t>() < 1 || size.get<std::int64_t>() > (1 << 30)) {
    fail(path + ".comm_size", "expected a communicator size >= 1");
  }
  rules.min_comm_size = size.get<int>();
  if (auto it = value.find("topology"); it != value.end()) {
    if (!it->is_string() || !parse_topology(it->get<std::string>().c_str(), &rules.topology)) {
      fail(path + ".topology", "expected \"single_node\", \"multi_node\" or \"any\"");
    }
  }
  const json& ranges = member(value, path, "ranges");
  if (!ranges.is_array()) fail(path + ".ranges", "expected an array of ranges");
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    rules.ranges.push_back(parse_range(ranges[i], path + ".ranges[" + std::to_string(i) + "]"));
  }
  check_tiling(rules.ranges, path + ".ranges");
  return rules;
}

Table parse_document(const json& doc) {
  if (!doc.is_object()) fail("(top level)", "expected an object");
  reject_unknown_keys(doc, "(top level)",
                      {"version", "machine", "created", "comment", "staged_chunk_bytes", kOwnChunksKey,
                       "p2p_eager_limit_bytes", "collectives"});
  const json& version = member(doc, "(top level)", "version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kTuningFileVersion) {
    fail("version", "unsupported version " + version.dump() + " (this library reads version " +
                        std::to_string(kTuningFileVersion) + ")");
  }
  const json& collectives = member(doc, "(top level)", "collectives");
  if (!collectives.is_object()) fail("collectives", "expected an object keyed by collective name");
  Table table;
  table.source = Source::tuning_file;
  parse_byte_settings(doc, &table);
  parse_own_chunks(doc, &table);
  for (const auto& item : collectives.items()) {
    const std::string path = "collectives." + item.key();
    CollKind kind;
    if (!parse_kind(item.key().c_str(), &kind)) fail(path, "unknown collective \"" + item.key() + "\"");
    if (!item.value().is_array()) fail(path, "expected an array of rules");
    std::set<std::pair<int, Topology>> seen;
    auto& rules = table.per_kind[static_cast<int>(kind)];
    for (std::size_t i = 0; i < item.value().size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      Rules r = parse_rules(item.value()[i], at);
      if (!seen.emplace(r.min_comm_size, r.topology).second) {
        fail(at, "a second rule for comm_size " + std::to_string(r.min_comm_size) + " and topology " +
                     topology_name(r.topology));
      }
      rules.push_back(std::move(r));
    }
  }
  return table;
}

// nlohmann reports the byte offset just past the offending character.
std::string line_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax error ..."
std::string strip_prefix(const std::string& what) {
  const std::size_t colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

ParsedTable parse_tuning_file(const std::string& text, const std::string& origin) {
  ParsedTable result;
  try {
    json doc = json::parse(text);
    result.table = parse_document(doc);
    result.table->origin = origin;
  } catch (const json::parse_error& e) {
    result.error = origin + ": " + line_column(text, e.byte) + ": " + strip_prefix(e.what());
  } catch (const FileError& e) {
    result.error = origin + ": " + e.path + ": " + e.what;
  } catch (const std::exception& e) {
    result.error = origin + ": " + e.what();
  }
  if (!result.error.empty()) result.table.reset();
  return result;
}

std::string write_tuning_file(const Table& table, const FileMetadata& metadata) {
  json doc = json::object();
  doc["version"] = kTuningFileVersion;
  if (!metadata.machine.empty()) doc["machine"] = metadata.machine;
  if (!metadata.created.empty()) doc["created"] = metadata.created;
  if (!metadata.comment.empty()) doc["comment"] = metadata.comment;
  for (const ByteSetting& setting : kByteSettings) {
    if (table.*setting.field != setting.default_bytes) doc[setting.file_key] = table.*setting.field;
  }
  json own_chunks = json::object();
  for (int k = 0; k < kCollKindCount; ++k) {
    const std::uint64_t chunk = table.own_staged_chunk[k];
    if (chunk != kNoOwnChunk) own_chunks[kind_name(static_cast<CollKind>(k))] = chunk;
  }
  if (!own_chunks.empty()) doc[kOwnChunksKey] = own_chunks;
  json collectives = json::object();
  for (int k = 0; k < kCollKindCount; ++k) {
    if (table.per_kind[k].empty()) continue;
    json rules = json::array();
    for (const Rules& r : table.per_kind[k]) {
      json ranges = json::array();
      for (const Range& range : r.ranges) {
        ranges.push_back({{"from", range.lo},
                          {"to", range.hi == kUnknownSize ? json(nullptr) : json(range.hi)},
                          {"path", backend_name(range.backend)}});
      }
      rules.push_back({{"comm_size", r.min_comm_size}, {"topology", topology_name(r.topology)}, {"ranges", ranges}});
    }
    collectives[kind_name(static_cast<CollKind>(k))] = rules;
  }
  doc["collectives"] = collectives;
  return doc.dump(2) + "\n";
}

}  // namespace mcrp::tuning
