// What the tuning suite measures, and the CSV file it keeps them in (one row per measurement:
// collective,comm_size,topology,bytes,path,latency_us,iterations). Point-to-point rows of the eager
// limit use the same columns with collective "p2p" and path "inline" or "rendezvous"; rows of the
// staged path's chunk use collective "staged_chunk:<collective>" ("staged_chunk:allreduce"; a bare
// "staged_chunk", as the suite first wrote them, is the allreduce) and the chunk's bytes as the path
// (0: unpipelined). Files without them (older ones) read as before.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tuning/decision.h"

namespace mcrp::tuning {

struct Measurement {
  CollKind kind = CollKind::allreduce;
  int comm_size = 1;
  Topology topology = Topology::any;
  std::uint64_t bytes = 0;
  Backend backend = Backend::nccl;
  double latency_us = 0;  // mean over iterations, the slowest rank's
  int iterations = 0;
};

// How a device-only communicator moves a payload (docs/point-to-point.md, "Device-only communicators").
enum class P2pProtocol : std::uint8_t { inline_payload, rendezvous };
const char* protocol_name(P2pProtocol protocol);  // "inline", "rendezvous"

// One ping-pong point of the eager-limit measurement (tune_p2p.h).
struct EagerMeasurement {
  int comm_size = 2;                  // the ranks that exchanged messages
  Topology topology = Topology::any;  // theirs
  std::uint64_t bytes = 0;            // payload of one message
  P2pProtocol protocol = P2pProtocol::inline_payload;
  double latency_us = 0;              // one way: half the mean round trip
  int iterations = 0;
};

// One point of the staged path's chunk measurement (tune_chunk.h): a staged `kind` of `bytes` cut
// into chunks of `chunk_bytes`.
struct ChunkMeasurement {
  int comm_size = 2;
  Topology topology = Topology::any;
  std::uint64_t bytes = 0;        // per rank, as for the collectives
  std::uint64_t chunk_bytes = 0;  // the setting timed; 0: unpipelined (one chunk)
  double latency_us = 0;          // mean over iterations, the slowest rank's
  int iterations = 0;
  CollKind kind = CollKind::allreduce;  // a collective whose staged path is pipelined
};

std::string measurements_csv_header();
std::string to_csv_row(const Measurement& m);
std::string to_csv_row(const EagerMeasurement& m);
std::string to_csv_row(const ChunkMeasurement& m);

// Reads the CSV written by mcrpmpi-tune: collective rows into `out`, point-to-point rows into `p2p`
// and chunk rows into `chunks` (each kind checked, and dropped when its vector is null). On error
// returns false and says which line is wrong.
bool read_measurements_csv(const std::string& path, std::vector<Measurement>* out, std::string* error,
                           std::vector<EagerMeasurement>* p2p = nullptr,
                           std::vector<ChunkMeasurement>* chunks = nullptr);

}  // namespace mcrp::tuning
