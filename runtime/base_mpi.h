// The base MPI the library interposes on: which loaded library it is, and facts about it.
//
// libmcrpmpi.so links no MPI library (docs/python-and-abi.md, "MPI libraries (ABI)"): its PMPI_ calls go to the
// MPICH-ABI library the process itself loaded, whether the program linked it (global scope) or
// Python opened it privately (mpi4py's RTLD_LOCAL dlopen of libmpi.so.12). This finds that library
// by looking through the loaded objects for the one that defines PMPI_Init.
#pragma once

#include <string>

namespace mcrp {

struct BaseMpi {
  void* handle = nullptr;  // dlopen handle of the library (nullptr: none usable, see `error`)
  std::string path;        // its file, as the dynamic loader names it
  std::string how;         // how it was chosen, for the report
  std::string error;       // why no library could be bound
  std::string others;      // other MPI libraries seen in the process (comma-separated), if any
};

// Found once, at the first call (normally the first PMPI_ call, inside MPI_Init or earlier).
// Order: MCRPMPI_BASE_MPI (a path or soname to load), else the first loaded object that defines
// PMPI_Init with the MPICH ABI, else libmpi.so.12 or libmpich.so.12 loaded by the library itself.
// Libraries of other ABIs (the MPI-5 standard ABI's libmpi_abi.so, Open MPI) are passed over.
const BaseMpi& base_mpi();

// A symbol of the base MPI (nullptr when it lacks it or none was found).
void* base_mpi_symbol(const char* name);

// The first line of the base MPI's MPI_Get_library_version, blanks collapsed ("MPICH Version: 4.0.2").
std::string base_mpi_version_line();

// "mcrpmpi: base MPI <path> (<version line>) <how>": what the library bound, for reports.
std::string base_mpi_report();

// Whether the base MPI takes CUDA device pointers itself (MPIX_Query_cuda_support of the base
// MPI): then device buffers go to it directly, after the application's prior device work, instead
// of being staged. Looked up by name once: other MPICH-ABI libraries (Intel MPI) may not have the
// MPICH extension.
bool base_mpi_cuda_aware();

}  // namespace mcrp
