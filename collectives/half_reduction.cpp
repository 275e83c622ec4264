#include "collectives/half_reduction.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <mutex>

#include "collectives/half_float.h"

namespace mcrp {
namespace {

template <typename Combine>
void combine_halves(void* in, void* inout, int* len, Combine combine) {
  const auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (int i = 0; i < *len; ++i) {
    std::uint16_t x, y;
    std::memcpy(&x, a + 2 * i, 2);
    std::memcpy(&y, b + 2 * i, 2);
    const std::uint16_t r = float_to_half(combine(half_to_float(x), half_to_float(y)));
    std::memcpy(b + 2 * i, &r, 2);
  }
}

void half_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  combine_halves(in, inout, len, [](float x, float y) { return x + y; });
}
void half_prod(void* in, void* inout, int* len, MPI_Datatype*) {
  combine_halves(in, inout, len, [](float x, float y) { return x * y; });
}
void half_max(void* in, void* inout, int* len, MPI_Datatype*) {
  combine_halves(in, inout, len, [](float x, float y) { return std::fmax(x, y); });
}
void half_min(void* in, void* inout, int* len, MPI_Datatype*) {
  combine_halves(in, inout, len, [](float x, float y) { return std::fmin(x, y); });
}

struct Substitutes {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op sum = MPI_OP_NULL, prod = MPI_OP_NULL, max = MPI_OP_NULL, min = MPI_OP_NULL;
};

Substitutes g_substitutes;
std::once_flag g_created;

const Substitutes& substitutes() {
  std::call_once(g_created, [] {
    PMPI_Type_contiguous(2, MPI_BYTE, &g_substitutes.type);
    PMPI_Type_commit(&g_substitutes.type);
    PMPI_Op_create(half_sum, 1, &g_substitutes.sum);
    PMPI_Op_create(half_prod, 1, &g_substitutes.prod);
    PMPI_Op_create(half_max, 1, &g_substitutes.max);
    PMPI_Op_create(half_min, 1, &g_substitutes.min);
  });
  return g_substitutes;
}

}  // namespace

bool half_substitute_reduction(CollKind kind, MPI_Op op, MPI_Datatype* type, MPI_Op* replacement) {
  if (!is_reduction(kind)) return false;
  if (op != MPI_SUM && op != MPI_PROD && op != MPI_MAX && op != MPI_MIN) return false;  // the base MPI reports it
  const Substitutes& s = substitutes();
  *type = s.type;
  *replacement = op == MPI_SUM ? s.sum : op == MPI_PROD ? s.prod : op == MPI_MAX ? s.max : s.min;
  return true;
}

void release_half_reduction() {
  if (g_substitutes.type == MPI_DATATYPE_NULL) return;
  PMPI_Type_free(&g_substitutes.type);
  for (MPI_Op* op : {&g_substitutes.sum, &g_substitutes.prod, &g_substitutes.max, &g_substitutes.min}) PMPI_Op_free(op);
}

}  // namespace mcrp
