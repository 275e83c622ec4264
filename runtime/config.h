// Run-time settings read once from the environment (see README, "Environment variables").
#pragma once
#include <string>

namespace mcrp {

struct Config {
  bool debug = false;           // MCRPMPI_DEBUG=1: log every routing decision and its reason
  bool stats = false;           // MCRPMPI_STATS=1: per-collective, per-path report at MPI_Finalize
  bool profile = false;         // MCRPMPI_PROFILE=1: per-step timing report at MPI_Finalize (runtime/profile.h)
  // MCRPMPI_VERIFY=1: ranks agree on memory types and arguments before each collective, and device
  // buffers are checked against their allocations, host buffers for being mapped (runtime/memory_checks.h)
  bool verify = false;
  // MCRPMPI_SHOW_BASE_MPI=1 (or MCRPMPI_DEBUG=1): rank 0 names the base MPI it bound at MPI_Init
  // (a Sessions-only program: each process, at its first MPI_Session_init)
  bool show_base_mpi = false;
  // MCRPMPI_NCCL_INLINE_LAUNCH (default 1; 0 turns it off): blocking NCCL communicators whose
  // launches run on the caller (runtime/nccl_comm.h); honoured only while NCCL connects at setup
  // (runtime/nccl_api.h). `asked`: the variable is set, so a refusal is worth a message.
  bool nccl_inline_launch = true;
  bool nccl_inline_launch_asked = false;
  double nccl_timeout_s = 600;  // MCRPMPI_NCCL_TIMEOUT: seconds before a stuck NCCL op is aborted (0: never)
  // MCRPMPI_P2P_DEVICE_ONLY=1: every communicator's point-to-point is asserted device-only
  // (p2p/assertion.h).
  bool p2p_device_only = false;
  // MCRPMPI_POLLING_COLLECTIVES=1 (default: as MCRPMPI_P2P_DEVICE_ONLY): blocking collectives run as
  // their nonblocking form and a wait that advances the library, so that no rank sits inside the
  // base MPI while a peer waits for its point-to-point protocol's answer (p2p/engine.h). Read from
  // the environment, so the same on every rank: blocking and nonblocking collectives never match.
  bool polling_collectives = false;
  // MCRPMPI_PROGRESS_THREAD: when a helper thread advances the point-to-point protocol while the
  // program does not (runtime/progress_thread.h). `automatic` (unset or "auto"): where the program
  // runs MPI at MPI_THREAD_MULTIPLE; `always` ("1"): MPI_Init also asks the base MPI for that level
  // in a process with CUDA; `off` ("0").
  enum class ProgressThread { off, automatic, always };
  ProgressThread progress_thread = ProgressThread::automatic;
};

const Config& config();

// "MCRPMPI_NCCL_TIMEOUT=3 s" (the setting as errors name it: shortest form of the number).
std::string nccl_timeout_text();

}  // namespace mcrp
