// Communicator entry points that can assert device-only point-to-point (p2p/assertion.h): setting
// the MPI 4.1 info key on a communicator, duplicating one with it, and -- under
// MCRPMPI_P2P_DEVICE_ONLY=1 -- making any new communicator. Each is collective over the (new)
// communicator, which is what setting up its protocol engine needs.
#include <mpi.h>

#include "p2p/assertion.h"

namespace {

// After a constructor: the new communicator is asserted when MCRPMPI_P2P_DEVICE_ONLY=1.
int assert_new(int rc, MPI_Comm* created) {
  if (rc == MPI_SUCCESS && created != nullptr && mcrp::device_only_everywhere()) {
    mcrp::assert_device_only(*created, true);
  }
  return rc;
}

}  // namespace

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  const int rc = PMPI_Comm_set_info(comm, info);
  if (rc == MPI_SUCCESS) mcrp::assert_device_only(comm, mcrp::info_asserts_device_only(info));
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  if (rc == MPI_SUCCESS) {
    mcrp::assert_device_only(*newcomm, mcrp::device_only_everywhere() || mcrp::info_asserts_device_only(info));
  }
  return rc;
}

// MPI-4 copies a communicator's info hints to its duplicate, so a duplicate of an asserted
// communicator is asserted too (engine_of answers alike on every rank: engines are made collectively).
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const bool inherits = mcrp::engine_of(comm) != nullptr;
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && (inherits || mcrp::device_only_everywhere())) mcrp::assert_device_only(*newcomm, true);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return assert_new(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return assert_new(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return assert_new(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return assert_new(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

}  // extern "C"
