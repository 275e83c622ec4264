#include "local/local_calls.h"

#include "device/cuda_runtime.h"
#include "runtime/base_mpi.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/host_only.h"
#include "runtime/memory_checks.h"
#include "runtime/mpich_handles.h"
#include "runtime/profile.h"
#include "runtime/staged_sides.h"

namespace mcrp {
namespace {

bool on_device(const void* pointer) { return device::locate(pointer).kind == device::MemoryKind::device; }

// MCRPMPI_PROFILE counts host calls too, and MCRPMPI_VERIFY checks their memory.
bool watched() { return profile::enabled() || config().verify; }

// A host call needs no look at its datatype's reach: predefined datatypes lie at the pointers.
bool host_call(const void* in, const void* out, MPI_Datatype datatype) {
  return host_only_process() || (!watched() && is_builtin_handle(datatype) && !on_device(in) && !on_device(out));
}

// MCRPMPI_PROFILE's rows (runtime/profile.h): one per call and path (mpi: host buffers, the base
// MPI's call as it is; staged; direct: device buffers to a CUDA-aware base MPI as they are).
enum class LocalRow : int { reduce_local, pack, unpack, pack_external, unpack_external };
constexpr const char* kRowNames[] = {"MPI_Reduce_local", "MPI_Pack", "MPI_Unpack", "MPI_Pack_external",
                                     "MPI_Unpack_external"};
constexpr int kRows = static_cast<int>(sizeof kRowNames / sizeof kRowNames[0]);
constexpr const char* kPathNames[] = {"mpi", "staged", "direct"};
constexpr int kPaths = static_cast<int>(sizeof kPathNames / sizeof kPathNames[0]);

void name_row(int row, const char** operation, const char** path) {
  *operation = kRowNames[row / kPaths];
  *path = kPathNames[row % kPaths];
}

constexpr int kCells = kRows * kPaths;
profile::RowBlock g_rows(kCells, name_row);

int path_column(int device, bool copy) { return device < 0 ? 0 : copy ? 1 : 2; }

LocalRow pack_row(const PackContext& where) {
  return where.datarep != nullptr ? LocalRow::pack_external : LocalRow::pack;
}
LocalRow unpack_row(const PackContext& where) {
  return where.datarep != nullptr ? LocalRow::unpack_external : LocalRow::unpack;
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

// MPICH reports a NULL data buffer of a pack or unpack as MPI_ERR_ARG (so does Intel MPI), where
// typed_side says MPI_ERR_BUFFER.
Status as_argument_error(Status status) {
  return status.error_class() == MPI_ERR_BUFFER ? Status(MPI_ERR_ARG, status.message()) : status;
}

// The packed size of `count` elements of `datatype` (MPI_Pack_size, MPI_Pack_external_size): a
// bound by the standard, exact in MPICH-derived MPIs (their packed data has no header).
int packed_size(const PackContext& where, MPI_Count count, MPI_Datatype datatype, MPI_Count* bytes) {
  return where.datarep != nullptr ? PMPI_Pack_external_size_c(where.datarep, count, datatype, bytes)
                                  : PMPI_Pack_size_c(count, datatype, where.comm, bytes);
}

// The packed buffer's bytes that `packed` bytes from position `from` reach, which must lie within
// its `size`. MPICH 4.0.2 does not check that: a pack past the end writes past the buffer, an
// unpack reads past it (Intel MPI refuses the pack with MPI_ERR_ARG).
Status packed_range(MPI_Count size, MPI_Count from, MPI_Count packed, Block* range) {
  if (from < 0 || from > size) return Status(MPI_ERR_ARG, "position outside the packed buffer");
  if (packed > size - from) return Status(MPI_ERR_ARG, "the packed data does not fit in the packed buffer");
  *range = Block{from, packed};
  return {};
}

Status packed_side(const PackContext& where, const void* buffer, MPI_Count size, const MPI_Count* position,
                   MPI_Count count, MPI_Datatype datatype, bool read, bool written, BufferSide* side) {
  if (position == nullptr) return Status(MPI_ERR_ARG, "null position");
  MPI_Count packed = 0;
  MCRP_TRY(from_base(packed_size(where, count, datatype, &packed)));
  Block range;
  MCRP_TRY(packed_range(size, *position, packed, &range));
  *side = side_of(buffer, MPI_BYTE, range, read, written);
  return {};
}

// A host pack or unpack goes to the base MPI once its packed bytes are known to fit, the one check
// of these calls MPICH 4.0.2 lacks: one MPI_Pack_size. A NULL position, a negative count or an
// invalid datatype handle the base MPI reports itself; a datatype MPI_Pack_size refuses
// (uncommitted) is reported by it, already through the error handler, as on the device path.
template <class Unchanged>
int host_pack_or_unpack(const PackContext& where, MPI_Count size, const MPI_Count* position, MPI_Count count,
                        MPI_Datatype datatype, Unchanged unchanged) {
  if (position == nullptr || count < 0 || !is_datatype_handle(datatype)) return unchanged();
  MPI_Count packed = 0;
  const int rc = packed_size(where, count, datatype, &packed);
  if (rc != MPI_SUCCESS) return rc;
  Block range;
  const Status status = packed_range(size, *position, packed, &range);
  return status.ok() ? unchanged() : raise_error(where.comm, where.name, 0, status);
}

// Runs the checked sides staged when any holds device memory, else the base call as it is; under
// MCRPMPI_VERIFY the memory behind both sides is checked first (runtime/memory_checks.h: no peer
// waits on these calls, so nothing needs agreeing).
template <class Unchanged>
int run_sides(const char* name, MPI_Comm comm, LocalRow row, Status status, StagedSides& sides, const BaseCall& base,
              Unchanged unchanged) {
  if (status.ok() && config().verify) status = check_buffer_memory(sides);
  if (status.ok()) {
    sides.device = device_of(sides);
    const bool copy = !base_mpi_cuda_aware();
    if (profile::enabled()) profile::charge(g_rows, static_cast<int>(row) * kPaths + path_column(sides.device, copy));
    if (sides.device < 0) return unchanged();
    status = run_staged_sides(sides, BuffersOnlyBase(base), copy);
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
  profile::CallTimer timing(profile::Form::blocking);
  const auto unchanged = [&] { return base(inbuf, inoutbuf, nullptr, datatype, op); };
  // MPICH 4.0.2 crashes on a negative count, and on a NULL buffer with data, instead of reporting
  // them: such calls are checked on host buffers too.
  const bool base_checks = count == 0 || (count > 0 && inbuf != nullptr && inoutbuf != nullptr);
  if (base_checks && host_call(inbuf, inoutbuf, datatype)) return unchanged();
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
    return run_sides("MPI_Reduce_local", MPI_COMM_WORLD, LocalRow::reduce_local, status, sides, base, unchanged);
  });
}

int run_pack(const PackContext& where, const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
             MPI_Count outsize, const MPI_Count* position, const BaseCall& base) {
  profile::CallTimer timing(profile::Form::blocking);
  const auto unchanged = [&] { return base(inbuf, outbuf, nullptr, datatype, MPI_OP_NULL); };
  if (host_call(inbuf, outbuf, datatype)) {
    return host_pack_or_unpack(where, outsize, position, incount, datatype, unchanged);
  }
  return guarded_local(where.name, where.comm, [&] {
    StagedSides sides;
    Status status = as_argument_error(
        typed_side(inbuf, incount, datatype, where.comm, true, false, &sides.send, &sides.send_type));
    // The packed bytes are read as well: the image must keep whatever lies past what the base MPI
    // writes, up to the packed size's bound.
    if (status.ok()) {
      status = packed_side(where, outbuf, outsize, position, incount, datatype, true, true, &sides.recv);
    }
    sides.recv_type = kByteType;
    sides.sendbuf = inbuf;
    sides.recvbuf = outbuf;
    return run_sides(where.name, where.comm, pack_row(where), status, sides, base, unchanged);
  });
}

int run_unpack(const PackContext& where, const void* inbuf, MPI_Count insize, const MPI_Count* position,
               void* outbuf, MPI_Count outcount, MPI_Datatype datatype, const BaseCall& base) {
  profile::CallTimer timing(profile::Form::blocking);
  const auto unchanged = [&] { return base(inbuf, outbuf, nullptr, datatype, MPI_OP_NULL); };
  if (host_call(inbuf, outbuf, datatype)) {
    return host_pack_or_unpack(where, insize, position, outcount, datatype, unchanged);
  }
  return guarded_local(where.name, where.comm, [&] {
    StagedSides sides;
    Status status = as_argument_error(
        typed_side(outbuf, outcount, datatype, where.comm, false, true, &sides.recv, &sides.recv_type));
    if (status.ok()) {
      status = packed_side(where, inbuf, insize, position, outcount, datatype, true, false, &sides.send);
    }
    sides.send_type = kByteType;
    sides.sendbuf = inbuf;
    sides.recvbuf = outbuf;
    return run_sides(where.name, where.comm, unpack_row(where), status, sides, base, unchanged);
  });
}

}  // namespace mcrp
