#include "p2p/profile_rows.h"

#include "runtime/profile.h"

namespace mcrp {
namespace {

constexpr int kP2PKindCount = 0
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) +1
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
    ;
constexpr int kP2PPathCount = 4;
constexpr const char* kPathNames[kP2PPathCount] = {"mpi", "staged", "direct", "device-only"};

void name_row(int row, const char** operation, const char** path) {
  *operation = mpi_name(static_cast<P2PKind>(row / kP2PPathCount));
  *path = kPathNames[row % kP2PPathCount];
}

profile::RowBlock g_rows(kP2PKindCount * kP2PPathCount, name_row);

// In PartitionedOp's order.
constexpr const char* kPartitionedNames[] = {"MPI_Psend_init",   "MPI_Precv_init",  "MPI_Pready",
                                             "MPI_Pready_range", "MPI_Pready_list", "MPI_Parrived"};
constexpr int kPartitionedOpCount = sizeof(kPartitionedNames) / sizeof(kPartitionedNames[0]);
static_assert(kPartitionedOpCount == static_cast<int>(PartitionedOp::parrived) + 1);

void name_partitioned_row(int row, const char** operation, const char** path) {
  *operation = mpi_name(static_cast<PartitionedOp>(row / kP2PPathCount));
  *path = kPathNames[row % kP2PPathCount];
}

// Registered after g_rows (one translation unit: in order of definition), so reported after it.
profile::RowBlock g_partitioned_rows(kPartitionedOpCount* kP2PPathCount, name_partitioned_row);

}  // namespace

void charge_profile(P2PKind kind, P2PPath path) {
  profile::charge(g_rows, static_cast<int>(kind) * kP2PPathCount + static_cast<int>(path));
}

void charge_profile(PartitionedOp op, P2PPath path) {
  profile::charge(g_partitioned_rows, static_cast<int>(op) * kP2PPathCount + static_cast<int>(path));
}

const char* mpi_name(PartitionedOp op) { return kPartitionedNames[static_cast<int>(op)]; }

}  // namespace mcrp
