// Communicator entry points that can assert device-only point-to-point (p2p/assertion.h): setting
// the MPI 4.1 info key on a communicator, duplicating one with it, making one with it in the
// constructor's info (MPI_Comm_split_type, the distributed graph constructors), and -- under
// MCRPMPI_P2P_DEVICE_ONLY=1 -- making any new intracommunicator (splits, groups, the topology
// constructors, MPI_Intercomm_merge). Each is collective over the (new) communicator, which is what
// setting up its protocol engine needs. Not wrapped: MPI_Comm_idup(_with_info) (nonblocking:
// nowhere to set up an engine collectively) and MPI_Comm_create_from_group (Sessions); their
// communicators stay on the staged path. MPI_Comm_get_info reports what the library adds: the
// memory allocation kinds it supports (runtime/memory_alloc_kinds.h) and the assertion it acts on.
// Under MCRPMPI_POLLING_COLLECTIVES=1 the members of each collective constructor meet first in a
// polled barrier (runtime/base_collective_meeting.h), but for MPI_Comm_create_group: only the group's
// members call it, so no barrier over the parent could match.
#include <mpi.h>

#include "p2p/assertion.h"
#include "runtime/base_collective_meeting.h"
#include "runtime/memory_alloc_kinds.h"
#include "runtime/raised_errors.h"

namespace {

// After a constructor: the new communicator is asserted when MCRPMPI_P2P_DEVICE_ONLY=1.
int assert_new(int rc, MPI_Comm* created) {
  if (rc == MPI_SUCCESS && created != nullptr && mcrp::device_only_everywhere()) {
    mcrp::assert_device_only(*created, true);
  }
  return rc;
}

// After a constructor that takes hints for the new communicator: asserted by the environment or by
// this rank's info. Every member takes part in the agreement (one allreduce on the new communicator
// when every member has CUDA), since another rank's info may assert what this one's does not.
int assert_new_with_info(int rc, MPI_Comm* created, MPI_Info info) {
  if (rc == MPI_SUCCESS && created != nullptr) {
    mcrp::assert_device_only(*created, mcrp::device_only_everywhere() || mcrp::info_asserts_device_only(info));
  }
  return rc;
}

}  // namespace

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_set_info(comm, info); });
  if (rc == MPI_SUCCESS) mcrp::assert_device_only(comm, mcrp::info_asserts_device_only(info));
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_dup_with_info(comm, info, newcomm); });
  return assert_new_with_info(rc, newcomm, info);
}

// MPI-4 copies a communicator's info hints to its duplicate, so a duplicate of an asserted
// communicator is asserted too (engine_of answers alike on every rank: engines are made collectively).
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const bool inherits = mcrp::engine_of(comm) != nullptr;
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_dup(comm, newcomm); });
  if (rc == MPI_SUCCESS && (inherits || mcrp::device_only_everywhere())) mcrp::assert_device_only(*newcomm, true);
  return rc;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  int rc = mcrp::base_result([&] { return PMPI_Comm_get_info(comm, info_used); });
  if (rc == MPI_SUCCESS) rc = mcrp::add_library_kinds(*info_used, nullptr);
  if (rc == MPI_SUCCESS) rc = mcrp::report_device_only_assertion(comm, *info_used);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_split(comm, color, key, newcomm); });
  return assert_new(rc, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_split_type(comm, split_type, key, info, newcomm); });
  return assert_new_with_info(rc, newcomm, info);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Comm_create(comm, group, newcomm); });
  return assert_new(rc, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return assert_new(mcrp::base_result([&] { return PMPI_Comm_create_group(comm, group, tag, newcomm); }), newcomm);
}

// Stencil and graph codes exchange halos on these.
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  const int rc = mcrp::after_meeting(
      comm_old, [&] { return PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart); });
  return assert_new(rc, comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  const int rc = mcrp::after_meeting(comm, [&] { return PMPI_Cart_sub(comm, remain_dims, newcomm); });
  return assert_new(rc, newcomm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  const int rc = mcrp::after_meeting(
      comm_old, [&] { return PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph); });
  return assert_new(rc, comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  const int rc = mcrp::after_meeting(comm_old, [&] {
    return PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder, comm_dist_graph);
  });
  return assert_new_with_info(rc, comm_dist_graph, info);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  const int rc = mcrp::after_meeting(comm_old, [&] {
    return PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                           destweights, info, reorder, comm_dist_graph);
  });
  return assert_new_with_info(rc, comm_dist_graph, info);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  const int rc = mcrp::after_meeting(intercomm, [&] { return PMPI_Intercomm_merge(intercomm, high, newintracomm); });
  return assert_new(rc, newintracomm);
}

}  // extern "C"
