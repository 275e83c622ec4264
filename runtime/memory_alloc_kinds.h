// MPI 4.1's memory allocation kinds: the info key `mpi_memory_alloc_kinds`, which a program may
// pass to MPI_Session_init to ask for kinds and reads back from MPI_Comm_get_info and
// MPI_Session_get_info to learn which the MPI supports (names from the forum's memory allocation
// kinds side document: "cuda", "cuda:device", "mpi:alloc_mem", ...).
//
// The base MPI cannot know what the library adds: Debian's MPICH 4.0.2 predates the key, and newer
// bases (the mpich 5 wheel) answer for their own build, without CUDA. The library supports every
// CUDA allocation on communicators (device, pinned host and managed memory: routed or staged), so
// it adds "cuda" to the base's answer for communicators and sessions; a session that asked for
// kinds also gets back each asked kind the library or the base supports, restrictors and all, as
// MPICH does. Windows and files are not the library's (one-sided and MPI-IO pass through): their
// answer stays the base MPI's.
#pragma once
#include <mpi.h>

#include <string>

namespace mcrp {

inline constexpr const char* kMemoryAllocKindsKey = "mpi_memory_alloc_kinds";
// The assertion of the kinds a process uses with one object (p2p/assertion.h reads it).
inline constexpr const char* kAssertMemoryAllocKindsKey = "mpi_assert_memory_alloc_kinds";

// The value of `key` in `info` (not MPI_INFO_NULL), whatever its length; false when it has none.
bool info_value(MPI_Info info, const char* key, std::string* value);

// `listed` (the base MPI's answer; null when it gave none, which MPI 4.1 reads as "mpi,system") with
// "cuda" added, then each kind of `requested` (comma-separated; null for none) that the library
// supports: "mpi" with any of its restrictors alloc_mem, win_allocate, win_allocate_shared;
// "system"; "cuda" with any of host, device, managed. Names compare without case, as MPICH's do;
// no kind is listed twice. Every rank answers alike, with or without a GPU of its own, as
// MPIX_Query_cuda_support does.
std::string with_library_kinds(const char* listed, const char* requested);

// Sets the key in `info` (an info object a get_info call just returned) to with_library_kinds of
// its current value and `requested`.
int add_library_kinds(MPI_Info info, const char* requested);

// What the application asked for in MPI_Session_init (its info's key), kept until the session is
// finalized; empty when it asked for nothing.
void remember_session_request(MPI_Session session, MPI_Info info);
std::string session_request(MPI_Session session);
// Before the base MPI's MPI_Session_finalize, while the handle is still the session's: the request,
// forgotten. Forgetting it after the base call could erase another thread's new session, given the
// same handle in between (MPICH reuses handles). Put it back with restore_session_request when the
// base call fails (the session stays).
std::string take_session_request(MPI_Session session);
void restore_session_request(MPI_Session session, std::string requested);

}  // namespace mcrp
