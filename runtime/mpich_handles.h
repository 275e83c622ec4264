// What the MPICH ABI's handle encoding (mpi.h) tells without asking the base MPI: bits 26-29 name
// the object kind, bits 30-31 how it is stored (0: invalid, as the MPI_*_NULL handles; 1: builtin,
// the predefined objects, numbered alike in every process).
#pragma once
#include <mpi.h>

namespace mcrp {

template <class Handle>
constexpr unsigned handle_bits(Handle handle) {
  return static_cast<unsigned>(handle);
}

// Predefined datatypes and ops (MPI_INT, MPI_SUM, ...).
template <class Handle>
constexpr bool is_builtin_handle(Handle handle) {
  return (handle_bits(handle) >> 30) == 1u;
}

// A datatype handle that is not MPI_DATATYPE_NULL nor an object of another kind.
inline bool is_datatype_handle(MPI_Datatype type) {
  return (handle_bits(type) & 0x3c000000u) == 0x0c000000u && (handle_bits(type) >> 30) != 0;
}

// A communicator handle that is not MPI_COMM_NULL nor an object of another kind.
inline bool is_comm_handle(MPI_Comm comm) {
  return (handle_bits(comm) & 0x3c000000u) == 0x04000000u && (handle_bits(comm) >> 30) != 0;
}

}  // namespace mcrp
