#include "collectives/agreement.h"

#include <cstdint>
#include <cstdio>

#include "collectives/layout.h"
#include "runtime/mpich_handles.h"
#include "tuning/decision.h"

namespace mcrp {
namespace {

// What the ranks of one call must pass alike, as numbers (0 where nothing is compared).
enum Field { kRoot, kOp, kType, kBytes, kFields };

void signature(const Prepared& p, long long out[kFields]) {
  const CollCall& c = *p.call;
  for (int i = 0; i < kFields; ++i) out[i] = 0;
  if (p.self.inter) return;
  if (is_rooted(c.kind)) out[kRoot] = c.root;
  // Predefined handles are numbered alike on every rank; user-defined ops and datatypes may be
  // numbered differently per rank, so only predefined ones are compared.
  if (is_reduction(c.kind)) {
    out[kOp] = is_builtin_handle(c.op) ? handle_bits(c.op) : 0;
    out[kType] = is_builtin_handle(c.recvtype) ? handle_bits(c.recvtype) : 0;
  }
  const std::uint64_t bytes =
      agreed_bytes(c, p.layout, p.self, p.send_type, p.recv_type).value_or(tuning::kUnknownSize);
  out[kBytes] = static_cast<long long>(bytes);
}

Status another_rank_failed(long long error_class) {
  return Status(static_cast<int>(error_class),
                "another rank passed arguments that failed the library's checks (MCRPMPI_VERIFY)");
}

Status disagreement(Field field) {
  static const struct {
    int error_class;
    const char* what;
  } kinds[kFields] = {{MPI_ERR_ROOT, "the root"},
                      {MPI_ERR_OP, "the reduction operation"},
                      {MPI_ERR_TYPE, "the reduction datatype"},
                      {MPI_ERR_COUNT, "the message size (counts times datatype sizes)"}};
  return Status(kinds[field].error_class,
                std::string("ranks passed different values for ") + kinds[field].what + " (MCRPMPI_VERIFY)");
}

}  // namespace

Agreement agree(const Prepared& p, bool device_memory, const Status& local) {
  // One MAX allreduce: memory kinds as two flags, the largest error class, and each field both as
  // itself and negated, so that max == -max(-x) exactly when every rank passed the same value.
  long long mine[3 + 2 * kFields] = {device_memory ? 1 : 0, device_memory ? 0 : 1, local.error_class()};
  long long fields[kFields];
  signature(p, fields);
  for (int i = 0; i < kFields; ++i) {
    mine[3 + i] = local.ok() ? fields[i] : 0;
    mine[3 + kFields + i] = -mine[3 + i];
  }
  long long all[3 + 2 * kFields];
  PMPI_Allreduce(mine, all, 3 + 2 * kFields, MPI_LONG_LONG, MPI_MAX, p.call->comm);
  Agreement agreement;
  agreement.memory_disagrees = all[0] == 1 && all[1] == 1;
  static bool warned = false;
  if (agreement.memory_disagrees && !warned) {
    warned = true;
    std::fprintf(stderr,
                 "mcrpmpi: warning: ranks passed host buffers and device buffers to one collective; "
                 "using the base MPI for such calls (see docs/routing.md, 'Memory types must match')\n");
  }
  if (!local.ok()) {
    agreement.outcome = local;
  } else if (all[2] != MPI_SUCCESS) {
    agreement.outcome = another_rank_failed(all[2]);
  } else {
    for (int i = 0; i < kFields; ++i) {
      if (all[3 + i] != -all[3 + kFields + i]) {
        agreement.outcome = disagreement(static_cast<Field>(i));
        break;
      }
    }
  }
  return agreement;
}

Status agree_on_checks(MPI_Comm comm, const Status& local) {
  const long long mine = local.error_class();
  long long all = MPI_SUCCESS;
  PMPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_MAX, comm);
  return !local.ok() || all == MPI_SUCCESS ? local : another_rank_failed(all);
}

}  // namespace mcrp
