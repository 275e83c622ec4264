// The other half of the base-MPI trampolines (cmake/BaseMpiTrampolines.cmake explains the scheme):
// at the first call of any trampoline, every slot is filled from the base MPI that base_mpi() found.
// Compiled only into libmcrpmpi.so; test programs that link the runtime objects call MPI directly.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "runtime/base_mpi.h"

// Defined by the generated base_mpi_trampolines.S: one slot and one name per MPI function the
// library calls.
extern "C" {
extern void* mcrp_base_mpi_slots[];
extern const char* const mcrp_base_mpi_names[];
extern const unsigned mcrp_base_mpi_count;
__attribute__((visibility("hidden"))) void* mcrp_base_mpi_resolve(unsigned index);
}

namespace {

// Stops the process with a message: a trampoline has no error code to return (its function's return
// type is unknown here), and calling on into a missing function would crash.
[[noreturn]] void stop(const char* function, const std::string& why) {
  std::fprintf(stderr, "mcrpmpi: cannot call %s: %s\n", function, why.c_str());
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

void fill_slots() {
  for (unsigned i = 0; i < mcrp_base_mpi_count; ++i) {
    __atomic_store_n(&mcrp_base_mpi_slots[i], mcrp::base_mpi_symbol(mcrp_base_mpi_names[i]), __ATOMIC_RELEASE);
  }
}

}  // namespace

// Called by a trampoline whose slot is still empty: binds all of them once, then returns this one's
// target.
extern "C" __attribute__((visibility("hidden"))) void* mcrp_base_mpi_resolve(unsigned index) {
  static std::once_flag filled;
  std::call_once(filled, fill_slots);
  const char* name = mcrp_base_mpi_names[index];
  void* target = __atomic_load_n(&mcrp_base_mpi_slots[index], __ATOMIC_ACQUIRE);
  if (target != nullptr) return target;
  const mcrp::BaseMpi& base = mcrp::base_mpi();
  if (base.handle == nullptr) stop(name, base.error);
  stop(name, "the base MPI " + base.path + " does not define it");
}
