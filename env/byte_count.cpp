#include "env/byte_count.h"

#include <cstdlib>

namespace mcrp::env {
namespace {

constexpr const char* kSyntax = "digits with an optional K, M or G suffix, powers of 1024";

// log2 of the multiplier a suffix stands for; -1 when `c` is not one.
int suffix_shift(char c) {
  switch (c) {
    case 'K': case 'k': return 10;
    case 'M': case 'm': return 20;
    case 'G': case 'g': return 30;
    default: return -1;
  }
}

}  // namespace

std::optional<std::uint64_t> parse_byte_count(const char* text, std::uint64_t max, std::string* why) {
  const char* p = text;
  std::uint64_t value = 0;
  bool too_large = false;
  for (; *p >= '0' && *p <= '9'; ++p) {
    const auto digit = static_cast<std::uint64_t>(*p - '0');
    if (value > (kNoByteLimit - digit) / 10) too_large = true;
    else value = value * 10 + digit;
  }
  if (p == text) {
    *why = std::string("expected ") + kSyntax;
    return std::nullopt;
  }
  if (*p != '\0') {
    const int shift = suffix_shift(*p);
    if (shift < 0 || p[1] != '\0') {
      *why = std::string("expected ") + kSyntax;
      return std::nullopt;
    }
    if (value > (kNoByteLimit >> shift)) too_large = true;
    else value <<= shift;
  }
  if (too_large || value > max) {
    *why = "more than the largest accepted value, " + std::to_string(max) + " bytes";
    return std::nullopt;
  }
  return value;
}

ByteCountSetting byte_count_from_env(const char* variable, std::uint64_t max) {
  ByteCountSetting setting;
  const char* text = std::getenv(variable);
  if (text == nullptr || text[0] == '\0') return setting;
  std::string why;
  setting.bytes = parse_byte_count(text, max, &why);
  if (!setting.bytes) setting.problem = std::string("ignoring ") + variable + "=" + text + " (" + why + ")";
  return setting;
}

}  // namespace mcrp::env
