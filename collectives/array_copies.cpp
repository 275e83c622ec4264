#include "collectives/array_copies.h"

namespace mcrp {

CountArray ArrayCopies::keep(const CountArray& array, int entries) {
  if (!array.present() || entries <= 0) return array;
  const auto n = static_cast<std::size_t>(entries);
  if (array.wide()) {
    const MPI_Count* values = array.wide_data();
    return wide_.emplace_back(values, values + n).data();
  }
  const int* values = array.narrow_data();
  return narrow_.emplace_back(values, values + n).data();
}

const MPI_Datatype* ArrayCopies::keep(const MPI_Datatype* types, int entries) {
  if (types == nullptr || entries <= 0) return types;
  return types_.emplace_back(types, types + static_cast<std::size_t>(entries)).data();
}

std::vector<MPI_Datatype> ArrayCopies::datatypes() const {
  std::vector<MPI_Datatype> all;
  for (const std::vector<MPI_Datatype>& kept : types_) all.insert(all.end(), kept.begin(), kept.end());
  return all;
}

}  // namespace mcrp
