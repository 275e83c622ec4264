// Ways of laying a message of ints out in memory, each named by a datatype, for tests that send with
// one layout and receive with another (the type signatures agree: a run of MPI_INT). Gaps between
// elements must stay untouched; a receive may name more units than the message fills, the last
// one partly (MPI_Get_count then answers MPI_UNDEFINED, MPI_Get_elements the ints received).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace mcrp_test {

enum class IntLayout {
  ints,       // MPI_INT
  pairs,      // MPI_Type_contiguous(2, MPI_INT): a unit of two elements
  gap_after,  // MPI_INT resized to an extent of 8 bytes: each element followed by a gap
  gap_before, // one int at displacement 4, extent 8: the data starts past the buffer argument
  swapped,    // hindexed, blocks at 4 and 0: a unit's two elements in reverse address order
};
constexpr int kIntLayouts = 5;
constexpr const char* kIntLayoutNames[] = {"MPI_INT", "contiguous(2)", "int+gap", "gap+int", "hindexed{4,0}"};

inline const char* layout_name(IntLayout layout) { return kIntLayoutNames[static_cast<int>(layout)]; }

// Elements of the message one datatype unit holds, and the ints of memory it spans.
inline int unit_elements(IntLayout layout) {
  return layout == IntLayout::pairs || layout == IntLayout::swapped ? 2 : 1;
}
inline int unit_extent(IntLayout layout) { return layout == IntLayout::ints ? 1 : 2; }

// Where element i of the message lies, in ints from the buffer argument.
inline MPI_Count element_position(IntLayout layout, MPI_Count i) {
  switch (layout) {
    case IntLayout::ints:
    case IntLayout::pairs: return i;
    case IntLayout::gap_after: return 2 * i;
    case IntLayout::gap_before: return 2 * i + 1;
    case IntLayout::swapped: return 2 * (i / 2) + (1 - i % 2);
  }
  return i;
}

// Units needed to hold n elements (the last one partly when n is not a multiple).
inline MPI_Count units_for(IntLayout layout, MPI_Count n) {
  return (n + unit_elements(layout) - 1) / unit_elements(layout);
}

// The ints of a buffer of `units` units plus one trailing sentinel: `elements` (which must fit) at
// their positions, `fill` everywhere else.
inline std::vector<int> laid_out(IntLayout layout, MPI_Count units, const std::vector<int>& elements, int fill) {
  std::vector<int> memory(static_cast<std::size_t>(units * unit_extent(layout)) + 1, fill);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    memory[static_cast<std::size_t>(element_position(layout, static_cast<MPI_Count>(i)))] = elements[i];
  }
  return memory;
}

// The committed datatypes, one per layout, freed with the object (before MPI_Finalize).
class IntLayoutTypes {
 public:
  IntLayoutTypes() {
    types_[0] = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &types_[1]);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &types_[2]);
    const int one = 1;
    const MPI_Aint at_four = sizeof(int);
    MPI_Datatype shifted;
    MPI_Type_create_hindexed(1, &one, &at_four, MPI_INT, &shifted);
    MPI_Type_create_resized(shifted, 0, 2 * sizeof(int), &types_[3]);
    MPI_Type_free(&shifted);
    const int lengths[2] = {1, 1};
    const MPI_Aint reversed[2] = {sizeof(int), 0};
    MPI_Type_create_hindexed(2, lengths, reversed, MPI_INT, &types_[4]);
    for (int k = 1; k < kIntLayouts; ++k) MPI_Type_commit(&types_[k]);
  }
  ~IntLayoutTypes() {
    for (int k = 1; k < kIntLayouts; ++k) MPI_Type_free(&types_[k]);
  }
  IntLayoutTypes(const IntLayoutTypes&) = delete;
  IntLayoutTypes& operator=(const IntLayoutTypes&) = delete;

  MPI_Datatype of(IntLayout layout) const { return types_[static_cast<int>(layout)]; }

 private:
  MPI_Datatype types_[kIntLayouts];
};

}  // namespace mcrp_test
