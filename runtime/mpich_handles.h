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

// A handle of the object kind `kind_bits` (bits 26-29 in place) that is not that kind's null handle.
template <class Handle>
constexpr bool is_handle_of_kind(Handle handle, unsigned kind_bits) {
  return (handle_bits(handle) & 0x3c000000u) == kind_bits && (handle_bits(handle) >> 30) != 0;
}

// A datatype handle that is not MPI_DATATYPE_NULL nor an object of another kind.
inline bool is_datatype_handle(MPI_Datatype type) { return is_handle_of_kind(type, 0x0c000000u); }

// A communicator handle that is not MPI_COMM_NULL nor an object of another kind.
inline bool is_comm_handle(MPI_Comm comm) { return is_handle_of_kind(comm, 0x04000000u); }

}  // namespace mcrp
