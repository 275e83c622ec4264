// Helpers shared by the tuning unit tests: the example tuning file, read from tests/tuning/data.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#ifndef MCRPMPI_TUNING_TEST_DATA
#error "MCRPMPI_TUNING_TEST_DATA must name tests/tuning/data"
#endif

inline std::string read_test_file(const std::string& name) {
  std::ifstream in(std::string(MCRPMPI_TUNING_TEST_DATA) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
