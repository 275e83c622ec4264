// The built libmcrpmpi.so defines every entry point it promises: each blocking collective of
// pmpi/collectives.def (and its _c form where the list says so) and the lifecycle/query entry
// points. dlsym on the library's handle would also find libmpich's definitions through its
// dependencies, so each symbol's defining object (dladdr) must be libmcrpmpi itself. The PMPI_
// names must NOT be defined there: the library reaches the base MPI through them.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <iterator>
#include <string>
#include <vector>

#ifndef MCRPMPI_LIBRARY_PATH
#error "MCRPMPI_LIBRARY_PATH must name the built libmcrpmpi.so"
#endif

namespace {

// One row per line of collectives.def: the names its entry points are built from.
struct CollectiveNames {
  const char* blocking;     // "Allreduce"
  const char* nonblocking;  // "Iallreduce"
  bool has_large_count;     // also the _c form
};

// The .def's parameter lists are not used here; the count types only need to exist.
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_COLLECTIVE(Name, NonblockingName, kind, large, PARAMS, ARGS) {#Name, #NonblockingName, (large) != 0},
constexpr CollectiveNames kCollectives[] = {
#include "pmpi/collectives.def"
};
#undef MCRPMPI_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS

// One row per line of block_collectives.def (MPI_Alltoallw, the neighborhood collectives): every one
// has the three families and their _c forms.
#define MCRP_COUNT int
#define MCRP_COUNTS const int*
#define MCRP_DISPLS const int*
#define MCRPMPI_BLOCK_COLLECTIVE(Name, NonblockingName, kind, PARAMS, ARGS) {#Name, #NonblockingName, true},
constexpr CollectiveNames kBlockCollectives[] = {
#include "pmpi/block_collectives.def"
};
#undef MCRPMPI_BLOCK_COLLECTIVE
#undef MCRP_COUNT
#undef MCRP_COUNTS
#undef MCRP_DISPLS

// The families of collective entry points the library exports: one line per family. Nonblocking
// (MPI_Iallreduce) and persistent (MPI_Allreduce_init) entry points are added by uncommenting theirs.
using FamilyName = std::string (*)(const CollectiveNames&);
const FamilyName kExportedFamilies[] = {
    [](const CollectiveNames& c) { return std::string(c.blocking); },
    [](const CollectiveNames& c) { return std::string(c.nonblocking); },
    [](const CollectiveNames& c) { return std::string(c.blocking) + "_init"; },
};

// One row per line of p2p.def.
struct P2PNames {
  const char* blocking;     // "Send"
  const char* nonblocking;  // "Isend"
  bool has_init;            // also MPI_<blocking>_init
};
#define MCRP_COUNT int
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) {#Name, #NonblockingName, (persistent) != 0},
constexpr P2PNames kP2P[] = {
#include "pmpi/p2p.def"
};
#undef MCRPMPI_P2P
#undef MCRP_COUNT

// Every p2p entry point: each form with its large-count twin.
std::vector<std::string> p2p_entry_points() {
  std::vector<std::string> names;
  for (const P2PNames& p : kP2P) {
    std::vector<std::string> forms = {std::string("MPI_") + p.blocking, std::string("MPI_") + p.nonblocking};
    if (p.has_init) forms.push_back(std::string("MPI_") + p.blocking + "_init");
    for (const std::string& form : forms) {
      names.push_back(form);
      names.push_back(form + "_c");
    }
  }
  return names;
}

const char* const kLifecycleEntryPoints[] = {
    "MPI_Init",           "MPI_Init_thread",         "MPI_Finalize",          "MPI_Comm_free",
    "MPI_Comm_disconnect", "MPIX_Query_cuda_support", "MPIX_GPU_query_support", "MPI_Query_thread",
    "MPI_Start",          "MPI_Startall",            "MPI_Request_free",      "MPI_Testall",
    "MPI_Wait",           "MPI_Waitall",             "MPI_Waitany",           "MPI_Waitsome",
    "MPI_Test",           "MPI_Testany",             "MPI_Testsome",          "MPI_Request_get_status",
    "MPI_Cancel",         "MPI_Reduce_local",        "MPI_Reduce_local_c",    "MPI_Pack",
    "MPI_Pack_c",         "MPI_Unpack",              "MPI_Unpack_c",          "MPI_Pack_external",
    "MPI_Pack_external_c", "MPI_Unpack_external",    "MPI_Unpack_external_c", "MPI_Buffer_attach",
    "MPI_Buffer_attach_c", "MPI_Buffer_detach",      "MPI_Buffer_detach_c",  "MPI_Type_free",
    "MPI_Op_free",        "MPI_Comm_get_info",       "MPI_Session_init",      "MPI_Session_get_info",
};

template <std::size_t N>
std::vector<std::string> collective_entry_points(const CollectiveNames (&list)[N]) {
  std::vector<std::string> names;
  for (const CollectiveNames& c : list) {
    for (FamilyName family : kExportedFamilies) {
      const std::string name = "MPI_" + family(c);
      names.push_back(name);
      if (c.has_large_count) names.push_back(name + "_c");
    }
  }
  return names;
}

std::vector<std::string> all_entry_points() {
  std::vector<std::string> names = collective_entry_points(kCollectives);
  const std::vector<std::string> block = collective_entry_points(kBlockCollectives);
  names.insert(names.end(), block.begin(), block.end());
  const std::vector<std::string> p2p = p2p_entry_points();
  names.insert(names.end(), p2p.begin(), p2p.end());
  names.insert(names.end(), std::begin(kLifecycleEntryPoints), std::end(kLifecycleEntryPoints));
  return names;
}

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? resolved : path;
}

class Exports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(MCRPMPI_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) load_error_ = dlerror();
  }
  static void TearDownTestSuite() {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = nullptr;
  }

  // The file that defines `name` as seen from the library's handle, or "" when nothing does.
  static std::string defining_file(const std::string& name) {
    void* symbol = dlsym(handle_, name.c_str());
    Dl_info info{};
    if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
    return real_path(info.dli_fname);
  }

  static void* handle_;
  static std::string load_error_;
};
void* Exports::handle_ = nullptr;
std::string Exports::load_error_;

TEST_F(Exports, LibraryLoads) { ASSERT_NE(handle_, nullptr) << load_error_; }

TEST_F(Exports, ListCoversEveryCollectiveOfTheDef) {
  // 16 collectives in 3 families (blocking, nonblocking, persistent), all but Barrier with _c forms:
  // a guard against a .def edit that breaks the macro.
  EXPECT_EQ(std::size(kCollectives), 16u);
  EXPECT_EQ(collective_entry_points(kCollectives).size(), 3u * 31u);
}

TEST_F(Exports, ListCoversEveryBlockCollectiveOfTheDef) {
  // MPI_Alltoallw and the five neighborhood collectives, 3 families, each with _c.
  EXPECT_EQ(std::size(kBlockCollectives), 6u);
  EXPECT_EQ(collective_entry_points(kBlockCollectives).size(), 3u * 12u);
}

TEST_F(Exports, ListCoversEveryPointToPointOperationOfTheDef) {
  // 8 operations; 5 have persistent forms: (8 * 2 + 5) forms, each with _c.
  EXPECT_EQ(std::size(kP2P), 8u);
  EXPECT_EQ(p2p_entry_points().size(), 2u * 21u);
}

TEST_F(Exports, EveryEntryPointIsDefinedInTheLibrary) {
  ASSERT_NE(handle_, nullptr) << load_error_;
  const std::string library = real_path(MCRPMPI_LIBRARY_PATH);
  for (const std::string& name : all_entry_points()) {
    const std::string file = defining_file(name);
    EXPECT_EQ(file, library) << name << (file.empty() ? " is not found at all" : " resolves into " + file);
  }
}

TEST_F(Exports, PmpiNamesAreLeftToTheBaseMpi) {
  ASSERT_NE(handle_, nullptr) << load_error_;
  const std::string library = real_path(MCRPMPI_LIBRARY_PATH);
  for (const std::string& name : all_entry_points()) {
    const std::string pmpi = "P" + name;
    EXPECT_NE(defining_file(pmpi), library) << pmpi << " is defined by libmcrpmpi: its calls to the base MPI "
                                                       "would come back to itself";
  }
}

}  // namespace
