// Command-line options of the test programs: `--key value` pairs and bare `--flag`s.
#pragma once
#include <cstring>
#include <string>

namespace mcrp_test {

inline std::string option(int argc, char** argv, const char* key, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], key) == 0) return argv[i + 1];
  }
  return fallback;
}

inline bool flag(int argc, char** argv, const char* key) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], key) == 0) return true;
  }
  return false;
}

}  // namespace mcrp_test
