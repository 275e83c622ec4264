#include "env/seconds.h"

#include <cstdlib>

namespace mcrp::env {
namespace {

constexpr const char* kSyntax = "expected a number of seconds: digits with an optional fraction, e.g. 600 or 2.5";

bool digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<double> parse_seconds(const char* text, std::string* why) {
  // Checked by hand first: strtod alone would take signs, exponents, hex, "inf" and "nan".
  const char* p = text;
  while (digit(*p)) ++p;
  const bool whole = p != text;
  if (*p == '.') {
    const char* fraction = ++p;
    while (digit(*p)) ++p;
    if (!whole && p == fraction) p = text;  // "." alone
  }
  if (p == text || *p != '\0') {
    *why = kSyntax;
    return std::nullopt;
  }
  const double seconds = std::strtod(text, nullptr);
  if (seconds > kMaxSeconds) {
    *why = "more than the largest accepted value, 1e9 s";
    return std::nullopt;
  }
  return seconds;
}

SecondsSetting seconds_from_env(const char* variable) {
  SecondsSetting setting;
  const char* text = std::getenv(variable);
  if (text == nullptr || text[0] == '\0') return setting;
  std::string why;
  setting.seconds = parse_seconds(text, &why);
  if (!setting.seconds) setting.problem = std::string("ignoring ") + variable + "=" + text + " (" + why + ")";
  return setting;
}

}  // namespace mcrp::env
