#include "tuning/library_hooks.h"

#include <dlfcn.h>

namespace mcrp::tuning {
namespace {

template <typename Fn>
void find(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
}

LibraryHooks look_up() {
  LibraryHooks hooks;
  Dl_info info{};
  void* mpi_init = dlsym(RTLD_DEFAULT, "MPI_Init");  // the definition calls bind to, not a PLT stub
  if (mpi_init == nullptr || dladdr(mpi_init, &info) == 0 || info.dli_fname == nullptr) return hooks;
  void* library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return hooks;
  find(library, "mcrpmpi_force_backend", &hooks.force_backend);
  find(library, "mcrpmpi_force_p2p_eager_limit", &hooks.force_p2p_eager_limit);
  find(library, "mcrpmpi_p2p_engine_eager_limit", &hooks.p2p_engine_eager_limit);
  find(library, "mcrpmpi_force_staged_chunk_bytes", &hooks.force_staged_chunk_bytes);
  find(library, "mcrpmpi_force_own_staged_chunk_bytes", &hooks.force_own_staged_chunk_bytes);
  find(library, "mcrpmpi_fake_device_alloc", &hooks.fake_device_alloc);
  find(library, "mcrpmpi_fake_device_free", &hooks.fake_device_free);
  dlclose(library);  // only drops the reference RTLD_NOLOAD added
  return hooks;
}

}  // namespace

const LibraryHooks& library_hooks() {
  static const LibraryHooks hooks = look_up();
  return hooks;
}

}  // namespace mcrp::tuning
