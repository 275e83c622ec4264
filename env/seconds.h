// Durations given in environment variables (MCRPMPI_NCCL_TIMEOUT): a non-negative decimal number of
// seconds, fractions allowed (600, 2.5, 0); nothing else (no sign, unit, exponent or trailing text),
// so that a typing mistake is reported instead of read as 0 ("wait forever") as atof would.
#pragma once
#include <optional>
#include <string>

namespace mcrp::env {

inline constexpr double kMaxSeconds = 1e9;  // ~31 years: anything larger is a mistake

// The seconds `text` names; nullopt (and *why says what is wrong) otherwise.
std::optional<double> parse_seconds(const char* text, std::string* why);

struct SecondsSetting {
  std::optional<double> seconds;  // set when the variable holds a valid duration
  std::string problem;            // set when it holds anything else: "ignoring NAME=VALUE (...)"
};

// Reads `variable`; unset or empty gives neither seconds nor a problem.
SecondsSetting seconds_from_env(const char* variable);

}  // namespace mcrp::env
