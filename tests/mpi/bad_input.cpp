// Erroneous calls must come back as MPI error codes (the communicators use MPI_ERRORS_RETURN), not
// crash or hang, and leave the communicator usable. Every rank makes the same mistake, so no rank
// is left waiting in a collective the others abandoned. The error class is part of the check's
// name, so the comparison mode (tests/compare) requires the library to give the base MPI's class.
#include "tests/mpi/suite.h"

namespace mcrp_test {

void run_bad_input(const Env& env) {
  const TestComm& tc = env.comm;
  int buf[4] = {1, 2, 3, 4};
  int out[4] = {0, 0, 0, 0};
  auto named = [&](const std::string& what, int rc) {
    int error_class = rc;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &error_class);
    return "bad input " + what + " comm=" + tc.name + " class=" + std::to_string(error_class) +
           ": expected an MPI error, got " + std::to_string(rc);
  };
  auto expect_error = [&](const std::string& what, int rc) { env.checker.check(rc != MPI_SUCCESS, named(what, rc)); };
  auto expect_error_beyond_base = [&](const std::string& what, int rc) {
    env.checker.check_beyond_base(rc != MPI_SUCCESS, named(what, rc));
  };
  for (CountForm f : kCountForms) {
    const std::string form = std::string(" form=") + form_name(f);
    if (env.quirks.reduction_datatype_null_aborts) {
      env.checker.skip("allreduce MPI_DATATYPE_NULL" + form + ": the base MPI aborts (base_mpi_quirks.h)");
    } else {
      expect_error("allreduce MPI_DATATYPE_NULL" + form,
                   call::allreduce(f, buf, out, 4, MPI_DATATYPE_NULL, MPI_SUM, tc.comm));
    }
    expect_error("allreduce MPI_OP_NULL" + form, call::allreduce(f, buf, out, 4, MPI_INT, MPI_OP_NULL, tc.comm));
    expect_error("allreduce MPI_COMM_NULL" + form, call::allreduce(f, buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    expect_error("bcast root=size" + form, call::bcast(f, buf, 4, MPI_INT, tc.size, tc.comm));
    expect_error("reduce root=-5" + form, call::reduce(f, buf, out, 4, MPI_INT, MPI_SUM, -5, tc.comm));
    expect_error("allgather recvcount=-3" + form, MPI_Allgather(buf, 1, MPI_INT, out, -3, MPI_INT, tc.comm));
    // Only where the library is present (it answers 1 here): MPICH 4.0.2 alone does not check a
    // negative count in MPI_Allreduce and aborts, so the base-only build cannot ask this.
    if (MPIX_Query_cuda_support() == 1) {
      expect_error_beyond_base("allreduce count=-1" + form,
                               call::allreduce(f, buf, out, -1, MPI_INT, MPI_SUM, tc.comm));
    }
  }
  // Still usable: a correct call after the errors gives the right answer.
  const int rc = MPI_Allreduce(buf, out, 4, MPI_INT, MPI_SUM, tc.comm);
  const int expected[4] = {tc.size, 2 * tc.size, 3 * tc.size, 4 * tc.size};
  env.checker.expect_equal("allreduce after bad input comm=" + tc.name, rc, out, expected, 4);
}

}  // namespace mcrp_test
