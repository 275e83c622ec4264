// osu_nccl: the raw-NCCL reference. The same sizes, timing, validation and OSU layout as the MPI
// benchmarks, plus nccl-tests' algorithm and bus bandwidth, calling NCCL directly on device buffers:
// what the library's NCCL path costs is the difference. Usage: osu_nccl -o allreduce [OSU options].
#include <cstdio>
#include <cstring>
#include <string>

#include "nccl_collectives.h"

int main(int argc, char** argv) {
  // -o is read here, before MPI starts, since it decides which benchmark runs; getopt reads it again.
  std::string name = "allreduce";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "-o") == 0) name = argv[i + 1];
  const osu::CollectiveSpec* spec = osu::nccl::find_collective(name);
  if (!spec) {
    std::fprintf(stderr, "osu_nccl: unknown collective '%s' (want one of: %s)\n", name.c_str(),
                 osu::nccl::collective_names());
    return 1;
  }
  return osu::run_collective(argc, argv, *spec);
}
