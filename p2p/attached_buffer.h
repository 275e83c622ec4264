// MPI_Buffer_attach of device memory. The base MPI copies every buffered send (MPI_Bsend,
// MPI_Ibsend, MPI_Bsend_init) into the attached buffer with host code, so device memory attached
// to a base MPI that is not CUDA-aware is a crash at the first buffered send. The library attaches
// host memory of the same size in its place and gives the caller's address back at
// MPI_Buffer_detach, whose base call has by then delivered every buffered message (as MPI says).
// The device memory itself is never touched: while a buffer is attached its contents are the MPI
// implementation's, so nothing tells the difference but the absence of the crash.
//
// Host, managed and pinned memory, a base MPI that reports CUDA support, and arguments the base MPI
// will refuse (a NULL buffer, a size below 1) go to the base MPI as they are.
#pragma once
#include <mpi.h>

#include <functional>

namespace mcrp {

// `attach` is the base MPI's attach of the given address (the caller's size bound in).
int attach_buffer(void* buffer, MPI_Count size, const std::function<int(void* address)>& attach);

// `detach` is the base MPI's detach, writing the detached address to `address` (and the size to
// the caller's variable); `buffer_addr` is the caller's void** argument.
int detach_buffer(void* buffer_addr, const std::function<int(void** address)>& detach);

}  // namespace mcrp
