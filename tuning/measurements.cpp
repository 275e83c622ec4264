#include "tuning/measurements.h"

#include <cstdio>
#include <cstring>
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

constexpr const char* kP2pName = "p2p";
constexpr const char* kChunkName = "staged_chunk";

// The columns both kinds of row share.
struct CommonFields {
  int comm_size = 1;
  Topology topology = Topology::any;
  std::uint64_t bytes = 0;
  double latency_us = 0;
  int iterations = 0;
};

bool parse_common(const std::vector<std::string>& f, CommonFields* c, std::string* why) {
  std::uint64_t comm_size = 0, iterations = 0;
  if (!parse_u64(f[1], &comm_size) || comm_size < 1 || comm_size > (1u << 30)) *why = "bad comm_size \"" + f[1] + "\"";
  else if (!parse_topology(f[2].c_str(), &c->topology)) *why = "bad topology \"" + f[2] + "\"";
  else if (!parse_u64(f[3], &c->bytes)) *why = "bad bytes \"" + f[3] + "\"";
  else if (!parse_double(f[5], &c->latency_us)) *why = "bad latency_us \"" + f[5] + "\"";
  else if (!parse_u64(f[6], &iterations) || iterations > (1u << 30)) *why = "bad iterations \"" + f[6] + "\"";
  c->comm_size = static_cast<int>(comm_size);
  c->iterations = static_cast<int>(iterations);
  return why->empty();
}

bool parse_protocol(const std::string& text, P2pProtocol* protocol) {
  for (P2pProtocol p : {P2pProtocol::inline_payload, P2pProtocol::rendezvous}) {
    if (text == protocol_name(p)) {
      *protocol = p;
      return true;
    }
  }
  return false;
}

bool parse_collective_row(const std::vector<std::string>& f, Measurement* m, std::string* why) {
  CommonFields c;
  if (!parse_kind(f[0].c_str(), &m->kind)) *why = "unknown collective \"" + f[0] + "\"";
  else if (!parse_backend(f[4].c_str(), &m->backend)) *why = "bad path \"" + f[4] + "\" (nccl or mpi)";
  else if (parse_common(f, &c, why)) *m = Measurement{m->kind, c.comm_size, c.topology, c.bytes, m->backend, c.latency_us, c.iterations};
  return why->empty();
}

bool parse_p2p_row(const std::vector<std::string>& f, EagerMeasurement* m, std::string* why) {
  CommonFields c;
  if (!parse_protocol(f[4], &m->protocol)) *why = "bad path \"" + f[4] + "\" (inline or rendezvous for p2p)";
  else if (parse_common(f, &c, why)) *m = EagerMeasurement{c.comm_size, c.topology, c.bytes, m->protocol, c.latency_us, c.iterations};
  return why->empty();
}

// "staged_chunk" (the allreduce) or "staged_chunk:<collective>"; false for any other first field.
bool is_chunk_row(const std::string& first) {
  return first.compare(0, std::strlen(kChunkName), kChunkName) == 0 &&
         (first.size() == std::strlen(kChunkName) || first[std::strlen(kChunkName)] == ':');
}

bool parse_chunk_row(const std::vector<std::string>& f, ChunkMeasurement* m, std::string* why) {
  CommonFields c;
  std::uint64_t chunk_bytes = 0;
  CollKind kind = CollKind::allreduce;
  const bool named = f[0].size() > std::strlen(kChunkName);  // "staged_chunk:<collective>"
  const std::string name = named ? f[0].substr(std::strlen(kChunkName) + 1) : "";
  if (named && (!parse_kind(name.c_str(), &kind) || !has_staged_pipeline(kind)))
    *why = "bad collective \"" + name + "\" for staged_chunk (one whose staged path is pipelined)";
  else if (!parse_u64(f[4], &chunk_bytes))
    *why = "bad path \"" + f[4] + "\" (the chunk's bytes for staged_chunk)";
  else if (parse_common(f, &c, why))
    *m = ChunkMeasurement{c.comm_size, c.topology, c.bytes, chunk_bytes, c.latency_us, c.iterations, kind};
  return why->empty();
}

std::string csv_row(const char* name, int comm_size, Topology topology, std::uint64_t bytes, const char* path,
                    double latency_us, int iterations) {
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.3f", latency_us);
  return std::string(name) + "," + std::to_string(comm_size) + "," + topology_name(topology) + "," +
         std::to_string(bytes) + "," + path + "," + latency + "," + std::to_string(iterations);
}

}  // namespace

std::string measurements_csv_header() { return "collective,comm_size,topology,bytes,path,latency_us,iterations"; }

const char* protocol_name(P2pProtocol protocol) {
  return protocol == P2pProtocol::inline_payload ? "inline" : "rendezvous";
}

std::string to_csv_row(const Measurement& m) {
  return csv_row(kind_name(m.kind), m.comm_size, m.topology, m.bytes, backend_name(m.backend), m.latency_us, m.iterations);
}

std::string to_csv_row(const EagerMeasurement& m) {
  return csv_row(kP2pName, m.comm_size, m.topology, m.bytes, protocol_name(m.protocol), m.latency_us, m.iterations);
}

std::string to_csv_row(const ChunkMeasurement& m) {
  return csv_row((std::string(kChunkName) + ":" + kind_name(m.kind)).c_str(), m.comm_size, m.topology, m.bytes,
                 std::to_string(m.chunk_bytes).c_str(), m.latency_us, m.iterations);
}

bool read_measurements_csv(const std::string& path, std::vector<Measurement>* out, std::string* error,
                           std::vector<EagerMeasurement>* p2p, std::vector<ChunkMeasurement>* chunks) {
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
    const std::vector<std::string> fields = split_fields(line);
    std::string why;
    Measurement collective;
    EagerMeasurement point;
    ChunkMeasurement chunk;
    if (fields.size() != 7) {
      why = "expected 7 fields, found " + std::to_string(fields.size());
    } else if (fields[0] == kP2pName) {
      if (parse_p2p_row(fields, &point, &why) && p2p != nullptr) p2p->push_back(point);
    } else if (is_chunk_row(fields[0])) {
      if (parse_chunk_row(fields, &chunk, &why) && chunks != nullptr) chunks->push_back(chunk);
    } else if (parse_collective_row(fields, &collective, &why)) {
      out->push_back(collective);
    }
    if (!why.empty()) {
      *error = path + ": line " + std::to_string(number) + ": " + why;
      return false;
    }
  }
  return true;
}

}  // namespace mcrp::tuning
