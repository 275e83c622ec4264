// The error codes the base MPI gives the program's own error handlers, recorded per thread.
//
// MPICH from 4.3 on (the `mpich` wheels 4.3.2 and 5.0.2) returns MPI_SUCCESS from a call whose error
// went to a user-defined error handler that returned. The MPI standard has the call return the code
// the handler was given, as MPICH 4.0.2 and 4.2.3 and Intel MPI 2021 do (docs/base-mpi-defects.md).
// The library reads the base MPI's return codes on its own paths (a staged receive posted, a
// datatype committed); taking a swallowed error for success there left requests that never complete.
// So the handlers a program creates with MPI_Comm_create_errhandler are wrapped: each records the
// code it was given on the calling thread, and from_base (runtime/errors.h) takes a recorded code as
// the failure of the base call just made, which the call then returns as MPI says it should.
// Communicator handlers only: the calls the library handles raise their errors on communicators
// (windows and files are not the library's; a session's handler sees no call of the library's).
#pragma once
#include <mpi.h>

#include <atomic>

namespace mcrp {

// The handler to create in place of `user`: it calls `user` and records the code (as `user` left
// it). Every wrapped function has one slot, reused when it is wrapped again; with all 64 slots taken
// (distinct handler functions, a handful a program) `user` itself, unrecorded.
MPI_Comm_errhandler_function* recording_comm_handler(MPI_Comm_errhandler_function* user);

// Whether any handler was wrapped: until then nothing is recorded, and taking or forgetting a code
// costs one load instead of a thread-local access (a call through __tls_get_addr in a shared
// library; the initial-exec model would be one instruction, but then a dlopen of the library fails,
// "cannot allocate memory in static TLS block").
extern std::atomic<bool> g_handlers_wrapped;

// The code a wrapped handler recorded on this thread since the last take or forget, MPI_SUCCESS if
// none; forgets it.
int take_recorded_code();
inline int take_raised_code() {
  return g_handlers_wrapped.load(std::memory_order_relaxed) ? take_recorded_code() : MPI_SUCCESS;
}

// Forgets a recorded code: at the start of a call the library routes, so that an error a direct
// call to the base MPI swallowed earlier is not taken for one of its own.
inline void forget_raised_code() {
  if (g_handlers_wrapped.load(std::memory_order_relaxed)) take_recorded_code();
}

// What `call` (base-MPI calls, returning an MPI code) returns, or, where that is MPI_SUCCESS, the
// code the base MPI gave the program's handler meanwhile: for a wrapper that reads what the base MPI
// wrote (a new communicator, an info object) only when the call succeeded.
template <class Call>
int base_result(Call&& call) {
  forget_raised_code();
  const int rc = call();
  const int raised = take_raised_code();
  return rc != MPI_SUCCESS ? rc : raised;
}

}  // namespace mcrp
