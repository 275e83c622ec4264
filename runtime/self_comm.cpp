#include "runtime/self_comm.h"

#include <atomic>
#include <mutex>

namespace mcrp {
namespace {

enum class Origin { none, world, session };

std::mutex g_mutex;
std::atomic<bool> g_made{false};  // the fast path: g_comm is ready
MPI_Comm g_comm = MPI_COMM_NULL;
std::atomic<Origin> g_origin{Origin::none};  // written under g_mutex, read without it
MPI_Session g_session = MPI_SESSION_NULL;
int g_open_sessions = 0;  // the application's, under g_mutex
// The application's own MPI_Init(_thread) has returned and its MPI_Finalize not begun. Not
// MPI_Initialized: Intel MPI 2021 answers 1 in a Sessions-only program.
std::atomic<bool> g_world_open{false};
// The library's duplicate of MPI_COMM_WORLD, made in the MPI_Init wrappers, probed for progress.
std::atomic<MPI_Comm> g_progress_comm{MPI_COMM_NULL};

bool world_model_active() {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  return initialized && !finalized;
}

// Under g_mutex.
void make_from_own_session() {
  if (PMPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &g_session) != MPI_SUCCESS) return;
  MPI_Group self = MPI_GROUP_NULL;
  if (PMPI_Group_from_session_pset(g_session, "mpi://SELF", &self) == MPI_SUCCESS) {
    PMPI_Comm_create_from_group(self, "org.mcrpmpi.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &g_comm);
    PMPI_Group_free(&self);
  }
  if (g_comm == MPI_COMM_NULL) {
    PMPI_Session_finalize(&g_session);
    return;
  }
  g_origin = Origin::session;
}

// Under g_mutex.
void release_locked() {
  g_made.store(false, std::memory_order_release);
  if (g_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_comm);
  if (g_session != MPI_SESSION_NULL) PMPI_Session_finalize(&g_session);
  g_origin = Origin::none;
}

}  // namespace

MPI_Comm library_self_comm() {
  if (g_made.load(std::memory_order_acquire)) return g_comm;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_made.load(std::memory_order_relaxed)) return g_comm;
  if (world_model_active()) {
    if (PMPI_Comm_dup(MPI_COMM_SELF, &g_comm) == MPI_SUCCESS) g_origin = Origin::world;
  } else if (g_open_sessions > 0) {
    make_from_own_session();
  }
  if (g_comm != MPI_COMM_NULL) {
    PMPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN);
    g_made.store(true, std::memory_order_release);
  }
  return g_comm;
}

MPI_Comm progress_probe_comm() {
  // Lock-free: this is on every wait's poll.
  const MPI_Comm own = g_progress_comm.load(std::memory_order_acquire);
  if (own != MPI_COMM_NULL) return own;
  // A program whose MPI_Init the library did not see (Fortran's goes to the base MPI directly):
  // MPI_COMM_WORLD itself, once the self communicator's origin says the world model is on.
  if (g_made.load(std::memory_order_acquire)) {
    return g_origin.load(std::memory_order_acquire) == Origin::world ? MPI_COMM_WORLD : MPI_COMM_NULL;
  }
  // Not made yet: make it only under the world model. In a Sessions-only program a progress poll
  // would otherwise open the library's session for a communicator it does not probe.
  return world_model_active() && library_self_comm() != MPI_COMM_NULL ? MPI_COMM_WORLD : MPI_COMM_NULL;
}

void session_opened() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_open_sessions;
}

void session_closing() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_open_sessions > 0) --g_open_sessions;
  // The library's session must not outlive the application's last one: MPI would stay initialized.
  if (g_open_sessions == 0 && g_origin == Origin::session) release_locked();
}

bool last_session_closing() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_open_sessions == 1 && !g_world_open.load(std::memory_order_acquire);
}

void world_model_opened() {
  g_world_open.store(true, std::memory_order_release);
  MPI_Comm comm = MPI_COMM_NULL;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  g_progress_comm.store(comm, std::memory_order_release);
}

void release_world_self_comm() {
  g_world_open.store(false, std::memory_order_release);
  MPI_Comm progress = g_progress_comm.exchange(MPI_COMM_NULL, std::memory_order_acq_rel);
  if (progress != MPI_COMM_NULL) PMPI_Comm_free(&progress);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_origin == Origin::world) release_locked();
}

}  // namespace mcrp
