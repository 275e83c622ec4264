// MPI_Testall without MPICH 4.0.2's defect: its Testall fails with MPI_ERR_IN_STATUS (every
// MPI_ERROR field 0) as soon as a completed persistent collective is in the array, which would abort
// programs using the library's device persistent requests (and host ones too). Here completion is
// first observed with MPI_Request_get_status, which does not free or deactivate anything and is
// unaffected, and only when every request is complete does Waitall (also unaffected) finish them.
// Same semantics as MPI_Testall: nothing completes unless everything does.
#pragma once
#include <mpi.h>

namespace mcrp {

int test_all(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);

}  // namespace mcrp
