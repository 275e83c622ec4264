// No exception crosses the C ABI: every router runs its body through guarded(), which turns what
// escapes it into an MPI error raised the router's own way (`fail`, given the Status).
#pragma once
#include <mpi.h>

#include <new>

#include "device/status.h"

namespace mcrp {

template <class Body, class Fail>
int guarded(Body&& body, Fail&& fail) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(Status(MPI_ERR_NO_MEM, "out of host memory"));
  } catch (...) {
    return fail(Status(MPI_ERR_INTERN, "unexpected internal error"));
  }
}

}  // namespace mcrp
