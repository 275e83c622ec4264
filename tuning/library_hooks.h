// The functions mcrpmpi-tune calls inside libmcrpmpi. The program holds a private copy of the tuning
// code (the library exports only C symbols), so each is looked up with dlsym in the object that
// defines the MPI_Init this program calls (linked or preloaded), never resolved at link time.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace mcrp::tuning {

struct LibraryHooks {
  int (*force_backend)(int kind, int backend) = nullptr;          // mcrpmpi_force_backend
  int (*force_p2p_eager_limit)(long long bytes) = nullptr;         // mcrpmpi_force_p2p_eager_limit
  long long (*p2p_engine_eager_limit)(MPI_Comm comm) = nullptr;    // mcrpmpi_p2p_engine_eager_limit
  int (*force_staged_chunk_bytes)(long long bytes) = nullptr;      // mcrpmpi_force_staged_chunk_bytes
  int (*force_own_staged_chunk_bytes)(int kind, long long bytes) = nullptr;  // mcrpmpi_force_own_staged_chunk_bytes
  void* (*fake_device_alloc)(std::size_t bytes) = nullptr;         // mcrpmpi_fake_device_alloc
  void (*fake_device_free)(void* pointer) = nullptr;               // mcrpmpi_fake_device_free
};

// Null members where the library is not in the process or lacks the function.
const LibraryHooks& library_hooks();

}  // namespace mcrp::tuning
