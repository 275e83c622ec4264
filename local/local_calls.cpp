#include "local/local_calls.h"

#include <algorithm>
#include <utility>

#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/mpich_handles.h"
#include "runtime/staged_sides.h"

namespace mcrp {
namespace {

bool on_device(const void* pointer) { return device::locate(pointer).kind == device::MemoryKind::device; }

// A host call needs no look at its datatype's reach: predefined datatypes lie at the pointers.
bool host_call(const void* in, const void* out, MPI_Datatype datatype) {
  return host_only_process() || (is_builtin_handle(datatype) && !on_device(in) && !on_device(out));
}

BufferSide side_of(const void* base, MPI_Datatype type, Block block, bool read, bool written) {
  BufferSide side;
  side.base = static_cast<char*>(const_cast<void*>(base));
  side.type = type;
  side.blocks = {block};
  side.read = read;
  side.written = written;
  return side;
}

// The `count` elements of `datatype` at `buffer`, checked as the base MPI checks them.
Status typed_side(const void* buffer, MPI_Count count, MPI_Datatype datatype, MPI_Comm comm, bool read,
                  bool written, BufferSide* side, TypeInfo* type) {
  if (count < 0) return Status(MPI_ERR_COUNT, "negative count");
  MCRP_TRY(type_info(datatype, type));
  MCRP_TRY(check_committed(datatype, comm));
  *side = side_of(buffer, datatype, Block{0, count}, read, written);
  return check_side(*side, *type);
}

// The packed buffer's bytes a pack or unpack of `count` elements may reach from `position`: at most
// the packed size of those elements (MPI_Pack_size, MPI_Pack_external_size), within `size`.
Status packed_side(const PackContext& where, const void* buffer, MPI_Count size, const MPI_Count* position,
                   MPI_Count count, MPI_Datatype datatype, bool read, bool written, BufferSide* side) {
  if (position == nullptr) return Status(MPI_ERR_ARG, "null position");
  MPI_Count bound = 0;
  const int rc = where.datarep != nullptr ? PMPI_Pack_external_size_c(where.datarep, count, datatype, &bound)
                                          : PMPI_Pack_size_c(count, datatype, where.comm, &bound);
  MCRP_TRY(from_base(rc));
  const MPI_Count from = *position;
  if (from < 0 || from > size) return Status(MPI_ERR_ARG, "position outside the packed buffer");
  const MPI_Count length = std::min(size - from, bound);
  *side = side_of(buffer, MPI_BYTE, Block{from, length}, read, written);
  return {};
}

// Runs the checked sides staged when any holds device memory, else the base call as it is.
template <class Unchanged>
int run_sides(const char* name, MPI_Comm comm, Status status, StagedSides& sides, const BaseCall& base,
              Unchanged unchanged) {
  if (status.ok()) {
    sides.device = device_of(sides);
    if (sides.device < 0) return unchanged();
    status = run_staged_sides(sides, BuffersOnlyBase(base), !base_mpi_cuda_aware());
  }
  return status.ok() ? MPI_SUCCESS : raise_error(comm, name, 0, status);
}

template <class Body>
int guarded_local(const char* name, MPI_Comm comm, Body&& body) {
  return guarded(body, [&](const Status& status) { return raise_error(comm, name, 0, status); });
}

}  // namespace

int run_reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     const BaseCall& base) {
  const auto unchanged = [&] { return base(inbuf, inoutbuf, nullptr, datatype, op); };
  if (host_call(inbuf, inoutbuf, datatype)) return unchanged();
  // MPICH raises the errors of MPI_Reduce_local, which has no communicator, on MPI_COMM_WORLD.
  return guarded_local("MPI_Reduce_local", MPI_COMM_WORLD, [&] {
    StagedSides sides;
    TypeInfo type;
    Status status = op == MPI_OP_NULL ? Status(MPI_ERR_OP, "MPI_OP_NULL") : Status();
    if (status.ok()) status = typed_side(inbuf, count, datatype, MPI_COMM_WORLD, true, false, &sides.send, &type);
    // As for the reductions: the base MPI checks a predefined op against the datatype first.
    if (status.error_class() == MPI_ERR_TYPE && is_builtin_handle(op)) {
      status = Status(MPI_ERR_OP, "the operation is not defined for an invalid datatype");
    }
    if (status.ok()) status = typed_side(inoutbuf, count, datatype, MPI_COMM_WORLD, true, true, &sides.recv, &type);
    sides.send_type = sides.recv_type = type;
    sides.sendbuf = inbuf;
    sides.recvbuf = inoutbuf;
    return run_sides("MPI_Reduce_local", MPI_COMM_WORLD, status, sides, base, unchanged);
  });
}

int run_pack(const PackContext& where, const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
             MPI_Count outsize, const MPI_Count* position, const BaseCall& base) {
  const auto unchanged = [&] { return base(inbuf, outbuf, nullptr, datatype, MPI_OP_NULL); };
  if (host_call(inbuf, outbuf, datatype)) return unchanged();
  return guarded_local(where.name, where.comm, [&] {
    StagedSides sides;
    Status status = typed_side(inbuf, incount, datatype, where.comm, true, false, &sides.send, &sides.send_type);
    // The packed bytes are read as well: the image must keep whatever lies past what the base MPI
    // writes, up to the packed size's bound.
    if (status.ok()) {
      status = packed_side(where, outbuf, outsize, position, incount, datatype, true, true, &sides.recv);
    }
    sides.recv_type = kByteType;
    sides.sendbuf = inbuf;
    sides.recvbuf = outbuf;
    return run_sides(where.name, where.comm, status, sides, base, unchanged);
  });
}

int run_unpack(const PackContext& where, const void* inbuf, MPI_Count insize, const MPI_Count* position,
               void* outbuf, MPI_Count outcount, MPI_Datatype datatype, const BaseCall& base) {
  const auto unchanged = [&] { return base(inbuf, outbuf, nullptr, datatype, MPI_OP_NULL); };
  if (host_call(inbuf, outbuf, datatype)) return unchanged();
  return guarded_local(where.name, where.comm, [&] {
    StagedSides sides;
    Status status = typed_side(outbuf, outcount, datatype, where.comm, false, true, &sides.recv, &sides.recv_type);
    if (status.ok()) {
      status = packed_side(where, inbuf, insize, position, outcount, datatype, true, false, &sides.send);
    }
    sides.send_type = kByteType;
    sides.sendbuf = inbuf;
    sides.recvbuf = outbuf;
    return run_sides(where.name, where.comm, status, sides, base, unchanged);
  });
}

}  // namespace mcrp
