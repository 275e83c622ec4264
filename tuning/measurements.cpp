#include "tuning/measurements.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace mcrp::tuning {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

// Whole-field numeric parses: "12abc" is an error, not 12.
bool parse_u64(const std::string& text, std::uint64_t* value) {
  std::size_t used = 0;
  try {
    if (text.empty() || text[0] == '-') return false;
    *value = std::stoull(text, &used);
  } catch (...) {
    return false;
  }
  return used == text.size();
}

bool parse_double(const std::string& text, double* value) {
  std::size_t used = 0;
  try {
    *value = std::stod(text, &used);
  } catch (...) {
    return false;
  }
  return used == text.size() && *value >= 0;
}

bool parse_row(const std::string& line, Measurement* m, std::string* why) {
  std::vector<std::string> f = split_fields(line);
  if (f.size() != 7) {
    *why = "expected 7 fields, found " + std::to_string(f.size());
    return false;
  }
  std::uint64_t comm_size = 0, iterations = 0;
  if (!parse_kind(f[0].c_str(), &m->kind)) *why = "unknown collective \"" + f[0] + "\"";
  else if (!parse_u64(f[1], &comm_size) || comm_size < 1) *why = "bad comm_size \"" + f[1] + "\"";
  else if (!parse_topology(f[2].c_str(), &m->topology)) *why = "bad topology \"" + f[2] + "\"";
  else if (!parse_u64(f[3], &m->bytes)) *why = "bad bytes \"" + f[3] + "\"";
  else if (!parse_backend(f[4].c_str(), &m->backend)) *why = "bad path \"" + f[4] + "\" (nccl or mpi)";
  else if (!parse_double(f[5], &m->latency_us)) *why = "bad latency_us \"" + f[5] + "\"";
  else if (!parse_u64(f[6], &iterations)) *why = "bad iterations \"" + f[6] + "\"";
  m->comm_size = static_cast<int>(comm_size);
  m->iterations = static_cast<int>(iterations);
  return why->empty();
}

}  // namespace

std::string measurements_csv_header() { return "collective,comm_size,topology,bytes,path,latency_us,iterations"; }

std::string to_csv_row(const Measurement& m) {
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.3f", m.latency_us);
  return std::string(kind_name(m.kind)) + "," + std::to_string(m.comm_size) + "," + topology_name(m.topology) + "," +
         std::to_string(m.bytes) + "," + backend_name(m.backend) + "," + latency + "," + std::to_string(m.iterations);
}

bool read_measurements_csv(const std::string& path, std::vector<Measurement>* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || (number == 1 && line == measurements_csv_header())) continue;
    Measurement m;
    std::string why;
    if (!parse_row(line, &m, &why)) {
      *error = path + ": line " + std::to_string(number) + ": " + why;
      return false;
    }
    out->push_back(m);
  }
  return true;
}

}  // namespace mcrp::tuning
