#include "osu/core/report.h"

#include <cstdio>

namespace osu {
namespace {
constexpr int kSizeWidth = 10;   // OSU's widths, kept for parsers that cut columns by position
constexpr int kFieldWidth = 18;
}  // namespace

void print_title(int rank, const std::string& test, Memory memory, const Element* element) {
  if (rank != 0) return;
  std::printf("# OSU MPI%s %s (mcrpmpi suite)\n", memory == Memory::cuda ? "-CUDA" : "", test.c_str());
  if (element) std::printf("# Datatype: %s.\n", element->name);
  std::fflush(stdout);
}

void print_columns(int rank, bool sized, const std::vector<std::string>& figures, const Options& opt) {
  if (rank != 0) return;
  std::printf("# %-*s", sized ? kSizeWidth - 2 : 0, sized ? "Size" : "");
  for (const std::string& f : figures) std::printf("%*s", kFieldWidth, f.c_str());
  if (opt.full_stats) std::printf("%*s", kFieldWidth, "Iterations");
  if (opt.validate) std::printf("%*s", kFieldWidth, "Validation");
  std::printf("\n");
  std::fflush(stdout);
}

void print_row(int rank, const Row& row, const Options& opt) {
  if (rank != 0) return;
  if (row.sized) std::printf("%-*zu", kSizeWidth, row.size);
  for (double f : row.figures) std::printf("%*.2f", kFieldWidth, f);
  if (opt.full_stats) std::printf("%*d", kFieldWidth, row.iterations);
  if (opt.validate) std::printf("%*s", kFieldWidth, row.valid ? "Pass" : "Fail");
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace osu
