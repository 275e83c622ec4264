// Calls that read and write buffers but talk to no peer: MPI_Reduce_local, MPI_Pack and MPI_Unpack
// (native and external32). On device memory the base MPI works on pinned host images of both
// buffers (runtime/staged_sides.h) and the result is copied back before the call returns; host
// buffers go to the base MPI as they are (in a process without CUDA before anything is looked at).
//
// Each takes the base MPI's own entry point, form-agnostic (int or _c), as a BaseCall whose buffer
// parameters are substituted by the images; `position` is the caller's value (its pointer stays
// the base MPI's to update).
#pragma once
#include <mpi.h>

#include "collectives/base_call.h"

namespace mcrp {

// MPI_Reduce_local(_c). Errors are raised on MPI_COMM_WORLD, as MPICH raises its own for this call.
int run_reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     const BaseCall& base);

// Where a pack or unpack happens: its communicator (MPI_COMM_WORLD for the external32 forms, which
// have none, as MPICH raises their errors there) and data representation (null: native).
struct PackContext {
  const char* name = "MPI_Pack";
  MPI_Comm comm = MPI_COMM_WORLD;
  const char* datarep = nullptr;
};

// MPI_Pack(_c), MPI_Pack_external(_c): `incount` elements of `datatype` from inbuf into the packed
// buffer outbuf of `outsize` bytes, from byte `*position` on.
int run_pack(const PackContext& where, const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
             MPI_Count outsize, const MPI_Count* position, const BaseCall& base);

// MPI_Unpack(_c), MPI_Unpack_external(_c): the reverse, from the packed buffer inbuf of `insize`
// bytes into `outcount` elements of `datatype` at outbuf.
int run_unpack(const PackContext& where, const void* inbuf, MPI_Count insize, const MPI_Count* position,
               void* outbuf, MPI_Count outcount, MPI_Datatype datatype, const BaseCall& base);

}  // namespace mcrp
