#include "runtime/base_mpi.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <vector>

#include "device/fake_device.h"

namespace mcrp {
namespace {

// Names of the loaded objects in load order ("" is the program itself).
std::vector<std::string> loaded_object_names() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name ? info->dlpi_name : "");
        return 0;
      },
      &names);
  return names;
}

void* open_loaded(const std::string& name) {
  return dlopen(name.empty() ? nullptr : name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
}

// The file of the object that defines PMPI_Init as seen from `handle` ("" when none does).
std::string pmpi_init_definer(void* handle) {
  void* init = dlsym(handle, "PMPI_Init");
  Dl_info info{};
  if (init == nullptr || dladdr(init, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// Why a library that defines PMPI_Init does not have the MPICH ABI ("" when it does): Open MPI
// (its handles are pointers to its own objects) or the MPI-5 standard ABI (libmpi_abi.so, whose
// MPI_Abi_get_version gives a major version above 0; MPICH-ABI libraries give -1 or lack it).
std::string foreign_abi(void* handle) {
  if (dlsym(handle, "ompi_mpi_comm_world") != nullptr) return "Open MPI ABI";
  using AbiVersionFn = int (*)(int*, int*);
  auto abi_version = reinterpret_cast<AbiVersionFn>(dlsym(handle, "PMPI_Abi_get_version"));
  int major = -1;
  int minor = -1;
  if (abi_version != nullptr && abi_version(&major, &minor) == 0 && major > 0) {
    return "MPI-5 standard ABI " + std::to_string(major) + "." + std::to_string(minor);
  }
  return "";
}

void append(std::string* list, const std::string& item) {
  if (!list->empty()) *list += ", ";
  *list += item;
}

// Takes `handle` as the base MPI when it has the MPICH ABI; otherwise notes why not in `skipped`.
bool adopt(BaseMpi* base, void* handle, const std::string& path, const char* how, std::string* skipped) {
  const std::string foreign = foreign_abi(handle);
  if (!foreign.empty()) {
    append(skipped, path + " (" + foreign + ")");
    return false;
  }
  base->handle = handle;
  base->path = path;
  base->how = how;
  return true;
}

void fail(BaseMpi* base, std::string error, const std::string& skipped) {
  if (!skipped.empty()) error += "; passed over: " + skipped;
  base->error = error;
}

// Whether the program linked the MPI (its symbols are in the global scope) or opened it privately.
const char* scope_of(const std::string& path) {
  Dl_info info{};
  void* global = dlsym(RTLD_DEFAULT, "PMPI_Init");
  if (global != nullptr && dladdr(global, &info) != 0 && info.dli_fname != nullptr && path == info.dli_fname) {
    return "linked by the program (global scope)";
  }
  return "opened by the program with RTLD_LOCAL (as mpi4py does)";
}

// The MPI the process already loaded: every object that defines PMPI_Init, first one bound.
bool adopt_loaded(BaseMpi* base, std::string* skipped) {
  std::vector<std::string> definers;
  for (const std::string& name : loaded_object_names()) {
    void* handle = open_loaded(name);
    if (handle == nullptr) continue;
    const std::string definer = pmpi_init_definer(handle);
    dlclose(handle);
    bool known = definer.empty();
    for (const std::string& seen : definers) known = known || seen == definer;
    if (!known) definers.push_back(definer);
  }
  for (const std::string& path : definers) {
    if (base->handle != nullptr) {
      append(&base->others, path);
      continue;
    }
    // The program's own symbols (a statically linked MPI) come with the global scope's handle.
    void* handle = open_loaded(path);
    if (handle == nullptr) handle = open_loaded("");
    if (!adopt(base, handle, path, scope_of(path), skipped)) dlclose(handle);
  }
  return base->handle != nullptr;
}

BaseMpi find_base_mpi() {
  BaseMpi base;
  std::string skipped;
  const char* forced = std::getenv("MCRPMPI_BASE_MPI");
  if (forced != nullptr && forced[0] != '\0') {
    void* handle = dlopen(forced, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      fail(&base, std::string("MCRPMPI_BASE_MPI=") + forced + ": " + dlerror(), skipped);
      return base;
    }
    const std::string definer = pmpi_init_definer(handle);
    if (definer.empty()) {
      fail(&base, std::string("MCRPMPI_BASE_MPI=") + forced + " defines no PMPI_Init", skipped);
    } else if (!adopt(&base, handle, definer, "from MCRPMPI_BASE_MPI", &skipped)) {
      fail(&base, std::string("MCRPMPI_BASE_MPI=") + forced + " is not an MPICH-ABI library", skipped);
    }
    return base;
  }
  if (adopt_loaded(&base, &skipped)) return base;
  if (!skipped.empty()) {
    // The program runs another ABI: loading an MPICH-ABI library beside it would not make it work.
    fail(&base, "the process's MPI library does not have the MPICH ABI this libmcrpmpi.so is built for",
         skipped);
    return base;
  }
  // Nothing loaded (a program that linked only libmcrpmpi): the MPICH ABI's usual sonames.
  for (const char* soname : {"libmpi.so.12", "libmpich.so.12"}) {
    void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) continue;
    const std::string definer = pmpi_init_definer(handle);
    if (!definer.empty() && adopt(&base, handle, definer, "loaded by mcrpmpi (the process had no MPI library)",
                                  &skipped)) {
      return base;
    }
    dlclose(handle);
  }
  fail(&base,
       "no MPICH-ABI MPI library (one defining PMPI_Init) is loaded in this process and neither "
       "libmpi.so.12 nor libmpich.so.12 can be loaded; set MCRPMPI_BASE_MPI to its path",
       skipped);
  return base;
}

}  // namespace

const BaseMpi& base_mpi() {
  static const BaseMpi instance = find_base_mpi();
  return instance;
}

void* base_mpi_symbol(const char* name) {
  const BaseMpi& base = base_mpi();
  return base.handle != nullptr ? dlsym(base.handle, name) : nullptr;
}

std::string base_mpi_version_line() {
  using VersionFn = int (*)(char*, int*);
  auto get_version = reinterpret_cast<VersionFn>(base_mpi_symbol("PMPI_Get_library_version"));
  if (get_version == nullptr) return "no MPI_Get_library_version";
  // MPI_MAX_LIBRARY_VERSION_STRING is 8192 in the MPICH ABI; room to spare for other builds.
  std::vector<char> text(65536, '\0');
  int length = 0;
  if (get_version(text.data(), &length) != 0) return "MPI_Get_library_version failed";
  std::string line;
  for (const char* c = text.data(); *c != '\0' && *c != '\n'; ++c) {
    const bool blank = *c == ' ' || *c == '\t';
    if (blank && (line.empty() || line.back() == ' ')) continue;
    line += blank ? ' ' : *c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::string base_mpi_report() {
  const BaseMpi& base = base_mpi();
  if (base.handle == nullptr) return "mcrpmpi: no base MPI: " + base.error;
  std::string report = "mcrpmpi: base MPI " + base.path + " (" + base_mpi_version_line() + "), " + base.how;
  if (!base.others.empty()) report += "; other MPI libraries in the process, not used: " + base.others;
  return report;
}

bool base_mpi_cuda_aware() {
  static const bool aware = [] {
    if (device::fake_cuda_aware_base()) return true;
    using QueryFn = int (*)();
    auto query = reinterpret_cast<QueryFn>(base_mpi_symbol("PMPIX_Query_cuda_support"));
    return query != nullptr && query() == 1;
  }();
  return aware;
}

}  // namespace mcrp
