#include "runtime/base_mpi.h"

#include <dlfcn.h>

namespace mcrp {

bool base_mpi_cuda_aware() {
  static const bool aware = [] {
    using QueryFn = int (*)();
    auto query = reinterpret_cast<QueryFn>(dlsym(RTLD_DEFAULT, "PMPIX_Query_cuda_support"));
    return query != nullptr && query() == 1;
  }();
  return aware;
}

}  // namespace mcrp
