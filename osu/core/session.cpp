#include "osu/core/session.h"

#include <cstdlib>
#include <cstring>

#include "osu/core/gpu.h"

namespace osu {

MpiSession::MpiSession(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

int MpiSession::prepare(int argc, char** argv, Options* opt, bool device_only) {
  const char* slash = std::strrchr(argv[0], '/');
  int code = parse_options(argc, argv, rank_, slash ? slash + 1 : argv[0], opt);
  if (code >= 0) return code;
  if (device_only) opt->memory = Memory::cuda;
  if (!select_device(opt->memory, MPI_COMM_WORLD)) return kNoDeviceExit;
  return -1;
}

bool corrupt_results_requested() {
  const char* v = std::getenv("OSU_CORRUPT_RESULT");
  return v && std::strcmp(v, "1") == 0;
}

void spin_for(double seconds) {
  double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
  }
}

}  // namespace osu
