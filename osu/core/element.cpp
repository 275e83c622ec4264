#include "osu/core/element.h"

#include <cctype>

namespace osu {
namespace {

template <typename T>
void store_as(void* base, std::size_t index, long value) {
  static_cast<T*>(base)[index] = static_cast<T>(value);
}

template <typename T>
long load_as(const void* base, std::size_t index) {
  return static_cast<long>(static_cast<const T*>(base)[index]);
}

template <typename T>
Element make(const char* name, MPI_Datatype type) {
  return Element{name, type, sizeof(T), &store_as<T>, &load_as<T>};
}

std::string upper(const std::string& s) {
  std::string u;
  for (char c : s) u.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return u;
}

}  // namespace

const Element* find_element(const std::string& name) {
  // MPI_Datatype handles are link-time constants in MPICH but not in every MPI: build on first use.
  static const Element table[] = {
      make<signed char>("MPI_CHAR", MPI_CHAR), make<int>("MPI_INT", MPI_INT),
      make<float>("MPI_FLOAT", MPI_FLOAT), make<double>("MPI_DOUBLE", MPI_DOUBLE)};
  std::string wanted = upper(name);
  if (wanted.rfind("MPI_", 0) != 0) wanted = "MPI_" + wanted;
  for (const Element& e : table)
    if (wanted == e.name) return &e;
  return nullptr;
}

}  // namespace osu
