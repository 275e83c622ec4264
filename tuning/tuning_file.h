// The tuning file: a versioned, human-editable JSON document of thresholds (format in
// docs/tuning.md). Parsing never throws and never half-succeeds: it yields a whole table or one
// message naming the line:column (syntax) or the JSON path (meaning) of the first problem.
#pragma once
#include <optional>
#include <string>

#include "tuning/table.h"

namespace mcrp::tuning {

inline constexpr int kTuningFileVersion = 1;

struct ParsedTable {
  std::optional<Table> table;  // set on success, with source = tuning_file and origin = the name given
  std::string error;           // set on failure, e.g. "/etc/t.json: line 4, column 7: syntax error ..."
};

// `origin` names the text in messages (a path). Checks: JSON syntax, version, known collectives,
// topology and path names, duplicate (comm_size, topology) rules, and that every rule's ranges are
// sorted, non-overlapping and contiguous from 0 to null (= no upper bound).
MCRPMPI_TUNING_API ParsedTable parse_tuning_file(const std::string& text, const std::string& origin);

struct FileMetadata {
  std::string machine;  // host name or a description of the machine the table was measured on
  std::string created;  // ISO 8601 time stamp
  std::string comment;
};

// The inverse of parse_tuning_file: a document parse_tuning_file accepts and that yields `table`.
MCRPMPI_TUNING_API std::string write_tuning_file(const Table& table, const FileMetadata& metadata);

}  // namespace mcrp::tuning
