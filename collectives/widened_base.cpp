#include "collectives/widened_base.h"

#include <vector>

#include "collectives/block_layout.h"

namespace mcrp {
namespace {

// The counts as MPI_Count, as many as the topology gives each side; a NULL array stays NULL.
class WideCounts {
 public:
  WideCounts(MPI_Comm comm, const int* sendcounts, const int* recvcounts) {
    BlockCall call;
    call.kind = BlockKind::neighbor_alltoallw;
    call.comm = comm;
    BlockCounts n;
    valid_ = block_counts(call, &n);
    if (!valid_) return;
    // Reserved first, so an empty array is still a pointer, as the caller's was.
    send_.reserve(static_cast<std::size_t>(n.sends) + 1);
    recv_.reserve(static_cast<std::size_t>(n.receives) + 1);
    if (sendcounts != nullptr) send_.assign(sendcounts, sendcounts + n.sends);
    if (recvcounts != nullptr) recv_.assign(recvcounts, recvcounts + n.receives);
    send_data_ = sendcounts != nullptr ? send_.data() : nullptr;
    recv_data_ = recvcounts != nullptr ? recv_.data() : nullptr;
  }
  // False when the communicator is invalid or has no topology: the int form then reports that.
  bool valid() const { return valid_; }
  const MPI_Count* send() const { return send_data_; }
  const MPI_Count* recv() const { return recv_data_; }

 private:
  bool valid_ = false;
  std::vector<MPI_Count> send_, recv_;
  const MPI_Count* send_data_ = nullptr;
  const MPI_Count* recv_data_ = nullptr;
};

// The base call, widened when the topology is known: `wide(counts)` calls a _c form, `narrow()`
// the caller's int form.
template <class Wide, class Narrow>
int widened(MPI_Comm comm, const int* sendcounts, const int* recvcounts, Wide wide, Narrow narrow) {
  const WideCounts counts(comm, sendcounts, recvcounts);
  return counts.valid() ? wide(counts) : narrow();
}

}  // namespace

int widened_neighbor_alltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Datatype* st, void* rb,
                               const int* rc, const MPI_Aint* rd, const MPI_Datatype* rt, MPI_Comm comm) {
  return widened(
      comm, sc, rc,
      [&](const WideCounts& w) { return PMPI_Neighbor_alltoallw_c(sb, w.send(), sd, st, rb, w.recv(), rd, rt, comm); },
      [&] { return PMPI_Neighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm); });
}

int widened_ineighbor_alltoallw(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Datatype* st, void* rb,
                                const int* rc, const MPI_Aint* rd, const MPI_Datatype* rt, MPI_Comm comm,
                                MPI_Request* request) {
  return widened(
      comm, sc, rc,
      [&](const WideCounts& w) {
        return PMPI_Ineighbor_alltoallw_c(sb, w.send(), sd, st, rb, w.recv(), rd, rt, comm, request);
      },
      [&] { return PMPI_Ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, request); });
}

int widened_neighbor_alltoallw_init(const void* sb, const int* sc, const MPI_Aint* sd, const MPI_Datatype* st,
                                    void* rb, const int* rc, const MPI_Aint* rd, const MPI_Datatype* rt,
                                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return widened(
      comm, sc, rc,
      [&](const WideCounts& w) {
        return PMPI_Neighbor_alltoallw_init_c(sb, w.send(), sd, st, rb, w.recv(), rd, rt, comm, info, request);
      },
      [&] { return PMPI_Neighbor_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, comm, info, request); });
}

}  // namespace mcrp
