// The element types a benchmark can move or reduce, and the values written into buffers: small
// integers that every type (char included) holds exactly, so a sum over ranks is exact in float too.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

namespace osu {

struct Element {
  const char* name;      // "MPI_FLOAT", as OSU prints it in "# Datatype: ..."
  MPI_Datatype type;
  std::size_t size;
  void (*store)(void* base, std::size_t index, long value);
  long (*load)(const void* base, std::size_t index);
};

// Looks up -T's argument ("float", "MPI_FLOAT", any case); nullptr when unknown.
const Element* find_element(const std::string& name);

// Marks a receive slot that nothing has written yet; no input() value equals it.
inline constexpr long kSentinel = -1;

// What rank `rank` contributes at element `index` in iteration `salt`: 1..61, varying with all three
// so that a value from the wrong rank, slot or iteration is caught.
inline long input(int rank, std::size_t index, int salt) {
  return static_cast<long>((static_cast<std::size_t>(rank) * 7 + index * 3 + static_cast<std::size_t>(salt)) % 61) + 1;
}

}  // namespace osu
