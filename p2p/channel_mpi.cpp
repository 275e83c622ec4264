// The base-MPI channel: each transfer of a group is a synchronous send (MPI_Issend) or a receive on
// a private communicator, so a group completes only when the peers have launched their side, as an
// NCCL group would. Between two ranks, transfers of one direction match in launch order (one tag).
#include <vector>

#include "p2p/channel.h"
#include "runtime/errors.h"

namespace mcrp {
namespace {

class MpiChannel final : public Channel {
 public:
  explicit MpiChannel(MPI_Comm comm) : comm_(comm) {}

  Status launch(const std::vector<ChannelTransfer>& group) override {
    requests_.assign(group.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < group.size(); ++i) {
      const ChannelTransfer& t = group[i];
      const auto bytes = static_cast<MPI_Count>(t.bytes);
      const int rc = t.send ? PMPI_Issend_c(t.data, bytes, MPI_BYTE, t.peer, 0, comm_, &requests_[i])
                            : PMPI_Irecv_c(t.data, bytes, MPI_BYTE, t.peer, 0, comm_, &requests_[i]);
      if (rc != MPI_SUCCESS) return already_raised(rc);
    }
    return {};
  }

  Status test(bool* done) override {
    int flag = 0;
    const int rc = PMPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return already_raised(rc);
    *done = flag != 0;
    return {};
  }

  const char* name() const override { return "mpi"; }
  int device() const override { return -1; }

 private:
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Channel> make_mpi_channel(MPI_Comm comm) { return std::make_unique<MpiChannel>(comm); }

}  // namespace mcrp
