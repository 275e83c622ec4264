#include "osu/core/options.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace osu {
namespace {

void usage(const char* program) {
  std::fprintf(stderr,
               "Usage: %s [options]\n"
               "  -m MIN:MAX   message sizes in bytes, powers of two from MIN to MAX (MAX alone: 1:MAX)\n"
               "  -i N[:L]     timed iterations per size; with L, N up to the -L size and L above\n"
               "               (default 1000, 100 above 8 KiB)\n"
               "  -x N[:L]     warm-up iterations per size, the same way (default 200, 10 above 8 KiB)\n"
               "  -L BYTES     where -i and -x switch to their large-message counts (default 8192)\n"
               "  -d host|cuda buffers in host memory or on the GPU of each rank\n"
               "  -d fake      buffers in libmcrpmpi's fake device memory (preloaded, MCRPMPI_FAKE_DEVICE=1)\n"
               "  -c           validate every result at every size (exit 1 when one is wrong)\n"
               "  -f           full statistics: min and max latency across ranks, iterations\n"
               "  -T TYPE      element type: char, int, float, double (mpi_ prefix accepted)\n"
               "  -W N         window of messages in flight (osu_bw, osu_bibw; default 64)\n"
               "  -o NAME      benchmark to run (osu_nccl only): a collective, or latency, bw, bibw, multi_lat\n"
               "  -A           point-to-point on a communicator asserted device-only (MPI 4.1 info\n"
               "               mpi_assert_memory_alloc_kinds=cuda:device): libmcrpmpi's NCCL path\n"
               "  -h           this help\n",
               program);
}

bool parse_size(const char* text, std::size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-') return false;
  *out = static_cast<std::size_t>(v);
  return true;
}

bool parse_range(const char* text, Options* o) {
  const char* colon = std::strchr(text, ':');
  if (!colon) return parse_size(text, &o->max_size);
  std::string lo(text, colon);
  if (!parse_size(lo.c_str(), &o->min_size)) return false;
  o->min_given = true;
  return colon[1] == '\0' || parse_size(colon + 1, &o->max_size);
}

bool parse_count(const char* text, int* out) {
  std::size_t v = 0;
  if (!parse_size(text, &v) || v > 1000000000u) return false;
  *out = static_cast<int>(v);
  return true;
}

// N or N:L (see Options::iterations); `least` is the smallest count allowed.
bool parse_counts(const char* text, int least, int* small, int* large) {
  const char* colon = std::strchr(text, ':');
  if (colon == nullptr) {
    if (!parse_count(text, small)) return false;
    *large = *small;
  } else if (!parse_count(std::string(text, colon).c_str(), small) || !parse_count(colon + 1, large)) {
    return false;
  }
  return *small >= least && *large >= least;
}

}  // namespace

int Options::iterations_for(std::size_t size) const {
  if (size > large_from) return iterations_large >= 0 ? iterations_large : 100;
  return iterations >= 0 ? iterations : 1000;
}

int Options::warmup_for(std::size_t size) const {
  if (size > large_from) return warmup_large >= 0 ? warmup_large : 10;
  return warmup >= 0 ? warmup : 200;
}

int parse_options(int argc, char** argv, int rank, const char* program, Options* out) {
  Options o;
  std::string problem;
  optind = 1;
  opterr = 0;
  int c;
  while (problem.empty() && (c = getopt(argc, argv, "m:i:x:L:d:cfT:W:o:Ah")) != -1) {
    switch (c) {
      case 'm':
        if (!parse_range(optarg, &o)) problem = "bad -m (want MIN:MAX in bytes)";
        break;
      case 'i':
        if (!parse_counts(optarg, 1, &o.iterations, &o.iterations_large)) problem = "bad -i (want N or N:L, >= 1)";
        break;
      case 'x':
        if (!parse_counts(optarg, 0, &o.warmup, &o.warmup_large)) problem = "bad -x (want N or N:L, >= 0)";
        break;
      case 'L':
        if (!parse_size(optarg, &o.large_from)) problem = "bad -L (want a size in bytes)";
        break;
      case 'd':
        if (std::strcmp(optarg, "host") == 0) o.memory = Memory::host;
        else if (std::strcmp(optarg, "cuda") == 0) o.memory = Memory::cuda;
        else if (std::strcmp(optarg, "fake") == 0) o.memory = Memory::fake;
        else problem = "bad -d (want host, cuda or fake)";
        break;
      case 'c': o.validate = true; break;
      case 'f': o.full_stats = true; break;
      case 'T': o.datatype = optarg; break;
      case 'W':
        if (!parse_count(optarg, &o.window) || o.window == 0) problem = "bad -W (want N >= 1)";
        break;
      case 'o': o.operation = optarg; break;
      case 'A': o.assert_device_only = true; break;
      case 'h':
        if (rank == 0) usage(program);
        return 0;
      default:
        problem = std::string("unknown option or missing value: -") + static_cast<char>(optopt);
    }
  }
  if (problem.empty() && optind < argc) problem = std::string("unexpected argument: ") + argv[optind];
  if (problem.empty() && o.min_size > o.max_size) problem = "bad -m: MIN is larger than MAX";
  if (!problem.empty()) {
    if (rank == 0) {
      std::fprintf(stderr, "%s: %s\n", program, problem.c_str());
      usage(program);
    }
    return 1;
  }
  *out = o;
  return -1;
}

}  // namespace osu
