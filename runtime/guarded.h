// No exception crosses the C ABI: every router runs its body through guarded(), which turns what
// escapes it into an MPI error raised the router's own way (`fail`, given the Status). It is also
// where a routed call begins and ends (runtime/raised_errors.h): a code recorded before it, by a
// direct call to the base MPI, is forgotten; a code the base MPI gave the program's handler during it,
// yet returned MPI_SUCCESS for, is what the call returns.
#pragma once
#include <mpi.h>

#include <new>

#include "device/status.h"
#include "runtime/raised_errors.h"

namespace mcrp {

template <class Body, class Fail>
int guarded(Body&& body, Fail&& fail) {
  try {
    return base_result(body);
  } catch (const std::bad_alloc&) {
    return fail(Status(MPI_ERR_NO_MEM, "out of host memory"));
  } catch (...) {
    return fail(Status(MPI_ERR_INTERN, "unexpected internal error"));
  }
}

}  // namespace mcrp
