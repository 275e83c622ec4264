// What the tuning suite measures, and the CSV file it keeps them in (one row per measurement:
// collective,comm_size,topology,bytes,path,latency_us,iterations).
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

std::string measurements_csv_header();
std::string to_csv_row(const Measurement& m);

// Reads the CSV written by mcrpmpi-tune. On error returns false and says which line is wrong.
bool read_measurements_csv(const std::string& path, std::vector<Measurement>* out, std::string* error);

}  // namespace mcrp::tuning
