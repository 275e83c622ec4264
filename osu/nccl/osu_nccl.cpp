// osu_nccl: the raw-NCCL reference. The same sizes, timing, validation and OSU layout as the MPI
// benchmarks, plus nccl-tests' algorithm and bus bandwidth for collectives, calling NCCL directly on
// device buffers: what the library's NCCL path costs is the difference.
// Usage: osu_nccl -o allreduce|...|latency|bw|bibw|multi_lat [OSU options].
#include <cstdio>
#include <cstring>
#include <string>

#include "nccl_collectives.h"
#include "nccl_point_to_point.h"
#include "nccl_session.h"

namespace {

struct PointToPointEntry {
  const char* option;
  osu::PointToPoint kind;
};
constexpr PointToPointEntry kPointToPoint[] = {
    {"latency", osu::PointToPoint::latency},
    {"bw", osu::PointToPoint::bandwidth},
    {"bibw", osu::PointToPoint::bidirectional},
    {"multi_lat", osu::PointToPoint::multi_latency},
};

}  // namespace

int main(int argc, char** argv) {
  if (!osu::nccl::read_steps()) return 2;
  // -o is read here, before MPI starts, since it decides which benchmark runs; getopt reads it again.
  std::string name = "allreduce";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "-o") == 0) name = argv[i + 1];
  for (const PointToPointEntry& entry : kPointToPoint) {
    if (name == entry.option) {
      return osu::run_point_to_point(argc, argv, entry.kind, osu::nccl::nccl_transport, "NCCL", true);
    }
  }
  const osu::CollectiveSpec* spec = osu::nccl::find_collective(name);
  if (!spec) {
    std::fprintf(stderr, "osu_nccl: unknown benchmark '%s' (want one of: %s, latency, bw, bibw, multi_lat)\n",
                 name.c_str(), osu::nccl::collective_names());
    return 1;
  }
  return osu::run_collective(argc, argv, *spec);
}
