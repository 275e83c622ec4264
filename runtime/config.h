// Run-time settings read once from the environment (see README, "Environment variables").
#pragma once

namespace mcrp {

struct Config {
  bool debug = false;           // MCRPMPI_DEBUG=1: log every routing decision and its reason
  bool stats = false;           // MCRPMPI_STATS=1: per-collective, per-path report at MPI_Finalize
  bool verify = false;          // MCRPMPI_VERIFY=1: ranks agree on memory types before each call
  double nccl_timeout_s = 600;  // MCRPMPI_NCCL_TIMEOUT: seconds before a stuck NCCL op is aborted (0: never)
};

const Config& config();

}  // namespace mcrp
