// The calls that move data between buffers of one process: MPI_Reduce_local, MPI_Pack, MPI_Unpack
// and the external32 forms, each int and _c, onto local/local_calls.h. The base MPI's own entry
// point goes along as a lambda whose buffer parameters the staged path replaces with host images.
#include <mpi.h>

#include "local/local_calls.h"

namespace {

// A position as the int, MPI_Aint or MPI_Count the form takes, read as an MPI_Count (null stays null).
template <class Position>
class PositionValue {
 public:
  explicit PositionValue(const Position* position) : value_(position != nullptr ? *position : 0), given_(position) {}
  const MPI_Count* get() const { return given_ != nullptr ? &value_ : nullptr; }

 private:
  MPI_Count value_;
  const Position* given_;
};

constexpr mcrp::PackContext pack_context(const char* name, MPI_Comm comm) { return {name, comm, nullptr}; }
constexpr mcrp::PackContext external_context(const char* name, const char* datarep) {
  return {name, MPI_COMM_WORLD, datarep};
}

}  // namespace

// The base entry point with its buffers replaced: `in` and `out` are the images (or the caller's).
#define MCRP_LOCAL_BASE(...) [&](const void* in, void* out, MPI_Request*, MPI_Datatype, MPI_Op) { return __VA_ARGS__; }

#define MCRP_REDUCE_LOCAL_WRAPPER(NAME, COUNT)                                                             \
  extern "C" int NAME(const void* inbuf, void* inoutbuf, COUNT count, MPI_Datatype datatype, MPI_Op op) { \
    auto base = MCRP_LOCAL_BASE(P##NAME(in, out, count, datatype, op));                                    \
    return mcrp::run_reduce_local(inbuf, inoutbuf, count, datatype, op, mcrp::BaseCall(base));            \
  }
MCRP_REDUCE_LOCAL_WRAPPER(MPI_Reduce_local, int)
MCRP_REDUCE_LOCAL_WRAPPER(MPI_Reduce_local_c, MPI_Count)

#define MCRP_PACK_WRAPPER(NAME, COUNT, POSITION)                                                          \
  extern "C" int NAME(const void* inbuf, COUNT incount, MPI_Datatype datatype, void* outbuf, COUNT outsize, \
                      POSITION* position, MPI_Comm comm) {                                                \
    auto base = MCRP_LOCAL_BASE(P##NAME(in, incount, datatype, out, outsize, position, comm));             \
    const PositionValue<POSITION> at(position);                                                           \
    return mcrp::run_pack(pack_context(#NAME, comm), inbuf, incount, datatype, outbuf, outsize, at.get(),  \
                          mcrp::BaseCall(base));                                                          \
  }
MCRP_PACK_WRAPPER(MPI_Pack, int, int)
MCRP_PACK_WRAPPER(MPI_Pack_c, MPI_Count, MPI_Count)

#define MCRP_UNPACK_WRAPPER(NAME, COUNT, POSITION)                                                         \
  extern "C" int NAME(const void* inbuf, COUNT insize, POSITION* position, void* outbuf, COUNT outcount,   \
                      MPI_Datatype datatype, MPI_Comm comm) {                                            \
    auto base = MCRP_LOCAL_BASE(P##NAME(in, insize, position, out, outcount, datatype, comm));             \
    const PositionValue<POSITION> at(position);                                                          \
    return mcrp::run_unpack(pack_context(#NAME, comm), inbuf, insize, at.get(), outbuf, outcount, datatype, \
                            mcrp::BaseCall(base));                                                       \
  }
MCRP_UNPACK_WRAPPER(MPI_Unpack, int, int)
MCRP_UNPACK_WRAPPER(MPI_Unpack_c, MPI_Count, MPI_Count)

#define MCRP_PACK_EXTERNAL_WRAPPER(NAME, COUNT, SIZE)                                                      \
  extern "C" int NAME(const char* datarep, const void* inbuf, COUNT incount, MPI_Datatype datatype,      \
                      void* outbuf, SIZE outsize, SIZE* position) {                                      \
    auto base = MCRP_LOCAL_BASE(P##NAME(datarep, in, incount, datatype, out, outsize, position));          \
    const PositionValue<SIZE> at(position);                                                              \
    return mcrp::run_pack(external_context(#NAME, datarep), inbuf, incount, datatype, outbuf, outsize,    \
                          at.get(), mcrp::BaseCall(base));                                               \
  }
MCRP_PACK_EXTERNAL_WRAPPER(MPI_Pack_external, int, MPI_Aint)
MCRP_PACK_EXTERNAL_WRAPPER(MPI_Pack_external_c, MPI_Count, MPI_Count)

#define MCRP_UNPACK_EXTERNAL_WRAPPER(NAME, COUNT, SIZE)                                                    \
  extern "C" int NAME(const char* datarep, const void* inbuf, SIZE insize, SIZE* position, void* outbuf, \
                      COUNT outcount, MPI_Datatype datatype) {                                           \
    auto base = MCRP_LOCAL_BASE(P##NAME(datarep, in, insize, position, out, outcount, datatype));          \
    const PositionValue<SIZE> at(position);                                                              \
    return mcrp::run_unpack(external_context(#NAME, datarep), inbuf, insize, at.get(), outbuf, outcount,  \
                            datatype, mcrp::BaseCall(base));                                             \
  }
MCRP_UNPACK_EXTERNAL_WRAPPER(MPI_Unpack_external, int, MPI_Aint)
MCRP_UNPACK_EXTERNAL_WRAPPER(MPI_Unpack_external_c, MPI_Count, MPI_Count)
