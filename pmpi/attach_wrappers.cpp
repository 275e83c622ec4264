// MPI_Buffer_attach and MPI_Buffer_detach, int and _c, onto p2p/attached_buffer.h: device memory
// attached for buffered sends is replaced by host memory the base MPI can write.
#include <mpi.h>

#include "p2p/attached_buffer.h"

#define MCRP_BUFFER_WRAPPERS(ATTACH, DETACH, SIZE)                                                     \
  extern "C" int ATTACH(void* buffer, SIZE size) {                                                     \
    return mcrp::attach_buffer(buffer, size, [&](void* address) { return P##ATTACH(address, size); }); \
  }                                                                                                    \
  extern "C" int DETACH(void* buffer_addr, SIZE* size) {                                               \
    return mcrp::detach_buffer(buffer_addr, [&](void** address) { return P##DETACH(address, size); });  \
  }
MCRP_BUFFER_WRAPPERS(MPI_Buffer_attach, MPI_Buffer_detach, int)
MCRP_BUFFER_WRAPPERS(MPI_Buffer_attach_c, MPI_Buffer_detach_c, MPI_Count)
