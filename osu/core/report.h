// OSU's output layout: "# OSU MPI ..." title lines, a "# Size ..." column header, then one row per
// size with the size left-aligned and each figure right-aligned in 18 characters with 2 decimals, so
// parsers written for the OSU Micro-Benchmarks read this suite's output. Only rank 0 prints.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "osu/core/element.h"
#include "osu/core/options.h"

namespace osu {

// "# OSU MPI Allreduce Latency Test (mcrpmpi suite)" ("MPI-CUDA" with device buffers), then the
// datatype line when element is given.
void print_title(int rank, const std::string& test, Memory memory, const Element* element);

// The column header; sized = false omits "Size" (osu_barrier). Adds "Iterations" with -f and
// "Validation" with -c.
void print_columns(int rank, bool sized, const std::vector<std::string>& figures, const Options& opt);

struct Row {
  bool sized = true;
  std::size_t size = 0;
  std::vector<double> figures;
  int iterations = 0;    // printed with -f
  bool valid = true;     // printed with -c as Pass / Fail
};
void print_row(int rank, const Row& row, const Options& opt);

}  // namespace osu
