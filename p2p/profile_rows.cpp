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

void name_row(int row, const char** operation, const char** path) {
  static const char* const paths[kP2PPathCount] = {"mpi", "staged", "direct", "device-only"};
  *operation = mpi_name(static_cast<P2PKind>(row / kP2PPathCount));
  *path = paths[row % kP2PPathCount];
}

profile::RowBlock g_rows(kP2PKindCount * kP2PPathCount, name_row);

}  // namespace

void charge_profile(P2PKind kind, P2PPath path) {
  profile::charge(g_rows, static_cast<int>(kind) * kP2PPathCount + static_cast<int>(path));
}

}  // namespace mcrp
