// The Wait/Test family over arrays that may hold persistent collective requests
// (requests_persistent.h). A device one is a base-MPI request that completes as soon as it is
// started; these functions treat it as incomplete while the collective behind it runs, so it
// completes when the collective has, in any array and through any of them. Waitany/Testany/
// Waitsome/Testsome also hide inactive persistent collective requests from the base MPI, which
// (MPICH 4.0.2) would report them completed over and over. Every one of them answers for an
// inactive registered request itself (complete at once, empty status): MPICH 4.0.2 reports a
// never-started persistent collective, the library's handle, incomplete for ever. The base MPI does the rest:
// generalized requests (device nonblocking calls) are polled by its own Wait/Test. In programs without persistent
// collectives each function is one atomic load plus the base call, and one more for the library's background work
// (p2p/engine.h): while some is pending, the waits poll instead of blocking in the base MPI and every Test form
// advances it, whatever its array holds, since a peer's transfer may wait for this rank's answer (MPI's progress rule).
//
// test_all also works around an MPICH 4.0.2 defect: its Testall fails with MPI_ERR_IN_STATUS (every
// MPI_ERROR field 0) as soon as a completed persistent collective is in the array. Completion is
// observed with MPI_Request_get_status (unaffected, frees nothing) and, once everything is
// complete, finished with Waitall; nothing completes unless everything does, as MPI_Testall says.
// Newer base MPIs (MPICH 4.2-5.0, Intel MPI 2021.18) lose a persistent request's status once
// MPI_Request_get_status has seen it complete: every function here gives back the status kept then
// (runtime/kept_statuses.h), for the program's MPI_Request_get_status calls and for test_all's own.
//
// Errors: a failed library request (runtime/requests.h) reports its own error, where MPICH 4.0.2's
// array forms would put a code of class MPI_ERR_OTHER in its status; a failed persistent round is
// reported when its handle completes (runtime/persistent.h, mark_completed): the error itself from
// Wait/Test/Waitany/Testany, MPI_ERR_IN_STATUS and the error in the status from the array forms.
#pragma once
#include <mpi.h>

namespace mcrp {

int wait_one(MPI_Request* request, MPI_Status* status);
int wait_all(int count, MPI_Request requests[], MPI_Status statuses[]);
int wait_any(int count, MPI_Request requests[], int* index, MPI_Status* status);
int wait_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int test_one(MPI_Request* request, int* flag, MPI_Status* status);
int test_all(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int test_any(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int test_some(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status);

// MPI_Wait that never blocks inside the base MPI: tests, advancing the library in between.
int wait_polling(MPI_Request* request, MPI_Status* status);

}  // namespace mcrp
