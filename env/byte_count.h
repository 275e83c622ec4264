// Byte counts given in environment variables (MCRPMPI_P2P_EAGER_LIMIT, MCRPMPI_STAGED_CHUNK_BYTES,
// the pool limits): one syntax for all of them, and one message for a value that does not follow it.
// The syntax is decimal digits with an optional K, M or G suffix (either case; powers of 1024), e.g.
// 65536, 64K, 1m, 2G; nothing else (no sign, spaces, fractions or "KiB"), so that a typing mistake
// is reported instead of read as something else. Depends on nothing else in the library: device/,
// tuning/ and runtime/ all use it.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace mcrp::env {

inline constexpr std::uint64_t kNoByteLimit = std::numeric_limits<std::uint64_t>::max();

// The bytes `text` names, at most `max`; nullopt (and *why says what is wrong) otherwise.
std::optional<std::uint64_t> parse_byte_count(const char* text, std::uint64_t max, std::string* why);

struct ByteCountSetting {
  std::optional<std::uint64_t> bytes;  // set when the variable holds a valid byte count
  std::string problem;                 // set when it holds anything else: "ignoring NAME=VALUE (...)"
};

// Reads `variable`; unset or empty gives neither bytes nor a problem.
ByteCountSetting byte_count_from_env(const char* variable, std::uint64_t max = kNoByteLimit);

}  // namespace mcrp::env
