// OSU's command-line conventions, shared by every benchmark of the suite, so that scripts written for
// the OSU Micro-Benchmarks drive these programs unchanged.
#pragma once
#include <cstddef>
#include <string>

namespace osu {

// fake: the library's fake device memory (MCRPMPI_FAKE_DEVICE=1 and libmcrpmpi preloaded): host
// memory the library treats as device memory, so the staged path can be measured on CPU.
enum class Memory { host, cuda, fake };

struct Options {
  std::size_t min_size = 1;          // -m min:max, bytes per message (OSU's meaning of "size")
  std::size_t max_size = 1 << 20;
  bool min_given = false;            // whether -m named a minimum (reductions start at one element)
  // -i N[:L] and -x N[:L]: N at every size, or N up to large_from bytes and L above (one run can
  // then cover small and large sizes with the counts each needs); -1: OSU's defaults (1000 and 100
  // timed, 200 and 10 warm-up). -L BYTES: large_from, OSU's 8 KiB unless given.
  int iterations = -1, iterations_large = -1;
  int warmup = -1, warmup_large = -1;
  std::size_t large_from = 8192;
  Memory memory = Memory::host;      // -d host|cuda|fake
  bool validate = false;             // -c: check every result at every size
  bool full_stats = false;           // -f: min, max and iteration count columns
  std::string datatype;              // -T char|int|float|double ("" = the benchmark's default)
  int window = 64;                   // -W: messages in flight (osu_bw, osu_bibw)
  std::string operation;             // -o: the collective (raw-NCCL benchmark only)
  bool assert_device_only = false;   // -A: point-to-point on a communicator asserted device-only

  int iterations_for(std::size_t size) const;
  int warmup_for(std::size_t size) const;
};

// Parses argv. Returns -1 when the program should run, otherwise the exit code to leave with
// (0 after -h, 1 after a bad option); the message goes to stderr from rank 0 only.
int parse_options(int argc, char** argv, int rank, const char* program, Options* out);

}  // namespace osu
