#include "p2p/partitioned.h"

#include <limits>
#include <memory>
#include <utility>

#include "device/cuda_runtime.h"
#include "p2p/partitioned_transfer.h"
#include "p2p/profile_rows.h"
#include "runtime/buffer.h"
#include "runtime/config.h"
#include "runtime/errors.h"
#include "runtime/guarded.h"
#include "runtime/handle_holds.h"
#include "runtime/memory_checks.h"
#include "runtime/persistent.h"
#include "runtime/profile.h"

namespace mcrp {
namespace {

// Every partition's bytes as one side, when counts, datatype and span are ones the base MPI would
// accept and cover at least one byte; false otherwise (the base MPI reports bad arguments in its own
// words, and never reads a host buffer early).
bool describe_buffer(const PartitionedCall& call, TypeInfo* type, BufferSide* all) {
  if (call.partitions < 1 || call.count < 0) return false;
  if (call.count > 0 && call.count > std::numeric_limits<MPI_Count>::max() / call.partitions) return false;
  if (!type_info(call.type, type).ok()) return false;
  all->base = static_cast<char*>(call.buf);
  all->type = call.type;
  all->blocks = {Block{0, call.count * call.partitions}};
  return check_side(*all, *type).ok() && span_of(*all, *type).bytes() > 0;
}

std::shared_ptr<PartitionedTransfer> transfer_of(MPI_Request request) {
  if (!persistent_requests_exist()) return nullptr;
  return std::dynamic_pointer_cast<PartitionedTransfer>(persistent_attachment(request));
}

// No exception crosses the C ABI; a failure is raised on the request's communicator.
template <class Body>
int run_guarded(MPI_Comm comm, const char* entry, Body&& body) {
  auto fail = [&](const Status& status) { return raise_error(comm, entry, 0, status); };
  return guarded(
      [&] {
        const Status status = body();
        return status.ok() ? MPI_SUCCESS : fail(status);
      },
      fail);
}

}  // namespace

int partitioned_init(const PartitionedCall& call, MPI_Request* request) {
  profile::CallTimer timing(profile::Form::blocking);
  const PartitionedOp op = call.receives ? PartitionedOp::precv_init : PartitionedOp::psend_init;
  profile::StepTimer classifying(profile::Step::classify);
  TypeInfo type;
  BufferSide all;
  device::PointerInfo where;
  // A null request is the base MPI's to report, on the call's communicator. Host buffers are
  // looked at only with a GPU present or under MCRPMPI_VERIFY.
  const bool verify = config().verify;
  const bool sound = request != nullptr && (device::cuda_available() || verify) && describe_buffer(call, &type, &all);
  if (sound) where = device::locate(memory_probe_address(all));
  classifying.stop();
  if (sound && verify) {  // the memory holds every partition (runtime/memory_checks.h)
    const int rc = run_guarded(call.comm, call.entry, [&] { return check_buffer_memory(all, type, where); });
    if (rc != MPI_SUCCESS) {
      *request = MPI_REQUEST_NULL;
      return rc;
    }
  }
  if (!sound || where.kind != device::MemoryKind::device) {
    if (profile::enabled()) charge_profile(op, P2PPath::mpi);
    return base_partitioned_init(call, request);
  }
  return run_guarded(call.comm, call.entry, [&]() -> Status {
    MCRP_TRY(check_committed(call.type, call.comm));
    auto transfer = std::make_shared<PartitionedTransfer>(call, type, where);
    if (profile::enabled()) charge_profile(op, transfer->path());
    MCRP_TRY(transfer->create());
    PersistentStart start = [transfer, op](MPI_Request* inner) {
      profile::CallTimer timing(profile::Form::started);  // the init call's row, form start
      if (profile::enabled()) charge_profile(op, transfer->path());
      const Status started = transfer->start(inner);
      return started.ok() ? MPI_SUCCESS : raise_error(transfer->comm(), "MPI_Start", 0, started);
    };
    return create_persistent(std::move(start), HandleHolds::of(call.comm, {call.type}), request, FreeActive::detach,
                             transfer);
  });
}

int ready_partitions(const PartitionList& partitions, MPI_Request request) {
  profile::CallTimer timing(profile::Form::blocking);
  const PartitionedOp op = partitions.form == PartitionList::Form::one     ? PartitionedOp::pready
                           : partitions.form == PartitionList::Form::range ? PartitionedOp::pready_range
                                                                           : PartitionedOp::pready_list;
  const std::shared_ptr<PartitionedTransfer> transfer = transfer_of(request);
  if (profile::enabled()) charge_profile(op, transfer ? transfer->path() : P2PPath::mpi);
  if (!transfer) return base_pready(partitions, request);
  return run_guarded(transfer->comm(), mpi_name(op), [&] { return transfer->ready(partitions); });
}

int partition_arrived(MPI_Request request, int partition, int* flag) {
  profile::CallTimer timing(profile::Form::blocking);
  const std::shared_ptr<PartitionedTransfer> transfer = transfer_of(request);
  if (profile::enabled()) charge_profile(PartitionedOp::parrived, transfer ? transfer->path() : P2PPath::mpi);
  if (!transfer) {
    profile::StepTimer in_base_mpi(profile::Step::wait);
    return PMPI_Parrived(request, partition, flag);
  }
  return run_guarded(transfer->comm(), "MPI_Parrived", [&] { return transfer->arrived(partition, flag); });
}

}  // namespace mcrp
