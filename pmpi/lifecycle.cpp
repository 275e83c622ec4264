// Initialisation, finalisation (world model and sessions), the release of communicators, datatypes
// and ops, plus the CUDA-support queries (MPIX, and MPI 4.1's memory allocation kinds of a session:
// runtime/memory_alloc_kinds.h).
// The NCCL communicator hangs off an attribute whose delete callback releases it, so MPI_Comm_free
// and MPI_Comm_disconnect need nothing for it. MPI_Comm_free, MPI_Type_free and MPI_Op_free put
// off the base MPI's free of a handle one of the library's requests still uses
// (runtime/handle_holds.h); MPI_Comm_disconnect first finishes the library's operations on the
// communicator (runtime/disconnect.h).
#include "runtime/lifecycle.h"

#include <mpi.h>

#include "collectives/shutdown.h"
#include "p2p/assertion.h"
#include "runtime/disconnect.h"
#include "runtime/handle_holds.h"
#include "runtime/memory_alloc_kinds.h"
#include "runtime/nccl_teardown.h"
#include "runtime/progress_thread.h"
#include "runtime/raised_errors.h"
#include "runtime/requests.h"
#include "runtime/self_comm.h"

namespace {

// After PMPI_Init(_thread): the runtime's start, then MPI_COMM_WORLD's device-only assertion
// (MCRPMPI_P2P_DEVICE_ONLY=1), which needs the runtime's WORLD map.
void after_init() {
  mcrp::on_initialized();
  if (mcrp::device_only_everywhere()) mcrp::assert_device_only(MPI_COMM_WORLD, true);
}

}  // namespace

extern "C" {

// The base MPI may be asked for more threading than the program asked for (runtime/progress_thread.h);
// the program is told what it asked for, as a plain MPI tells it.
int MPI_Init(int* argc, char*** argv) {
  int provided = MPI_THREAD_SINGLE;
  const int rc = mcrp::base_result([&] { return mcrp::init_base_mpi(argc, argv, nullptr, &provided); });
  if (rc == MPI_SUCCESS) after_init();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = mcrp::base_result([&] { return mcrp::init_base_mpi(argc, argv, &required, provided); });
  if (rc == MPI_SUCCESS) after_init();
  return rc;
}

int MPI_Query_thread(int* provided) { return mcrp::query_thread_level(provided); }

int MPI_Finalize(void) {
  mcrp::stop_progress_thread();  // first: it calls MPI
  // First, while the protocol engines run (finish_p2p stops them): operations the application freed
  // while active complete now, since nothing after MPI_Finalize could deliver them.
  mcrp::finish_freed_requests();
  mcrp::finish_collectives();
  mcrp::finish_p2p();
  mcrp::before_finalize();
  return PMPI_Finalize();
}

// Counted, so that the library's own session (runtime/self_comm.h) closes with the last of them.
int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  const int rc = PMPI_Session_init(info, errhandler, session);
  if (rc == MPI_SUCCESS) {
    mcrp::on_session_initialized();
    mcrp::session_opened();
    mcrp::remember_session_request(*session, info);
  }
  return rc;
}

int MPI_Session_finalize(MPI_Session* session) {
  const MPI_Session closing = session != nullptr ? *session : MPI_SESSION_NULL;
  // The last of a Sessions-only program's sessions ends MPI as MPI_Finalize does: operations the
  // application freed while active complete first, since nothing after it could deliver them.
  if (closing != MPI_SESSION_NULL && mcrp::last_session_closing()) mcrp::finish_freed_requests();
  mcrp::tear_down_retired_when_quiet();  // released NCCL communicators, if nothing is in flight
  if (closing != MPI_SESSION_NULL) mcrp::session_closing();
  std::string requested = mcrp::take_session_request(closing);  // before the base call frees the handle
  const int rc = PMPI_Session_finalize(session);
  if (rc != MPI_SUCCESS && !requested.empty()) mcrp::restore_session_request(closing, std::move(requested));
  return rc;
}

int MPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  const int rc = PMPI_Session_get_info(session, info_used);
  return rc == MPI_SUCCESS ? mcrp::add_library_kinds(*info_used, mcrp::session_request(session).c_str()) : rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  return mcrp::base_result([&] { return mcrp::free_comm(comm); });
}

int MPI_Type_free(MPI_Datatype* datatype) { return mcrp::free_datatype(datatype); }

int MPI_Op_free(MPI_Op* op) { return mcrp::free_op(op); }

int MPI_Comm_disconnect(MPI_Comm* comm) {
  return mcrp::base_result([&] { return mcrp::disconnect_comm(comm); });
}

// CUDA buffers are supported whatever the base MPI says: the library stages what it cannot route.
int MPIX_Query_cuda_support(void) { return 1; }

int MPIX_GPU_query_support(int gpu_type, int* is_supported) {
  if (gpu_type == MPIX_GPU_SUPPORT_CUDA && is_supported != nullptr) {
    *is_supported = 1;
    return MPI_SUCCESS;
  }
  // Bad arguments too: the base MPI reports them through the error handler, as MPI requires.
  return mcrp::base_result([&] { return PMPIX_GPU_query_support(gpu_type, is_supported); });
}

}  // extern "C"
