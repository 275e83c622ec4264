#include "nccl_point_to_point.h"

#include "nccl_session.h"
#include "osu/core/gpu.h"

namespace osu::nccl {
namespace {

// Each call is one NCCL group completed by a stream synchronization, as a blocking MPI call returns
// with its data in place.
class NcclTransport : public Transport {
 public:
  explicit NcclTransport(const Options& opt) : ack_(opt.memory, 1) { setup(MPI_COMM_WORLD); }
  ~NcclTransport() override { teardown(); }

  void send(const void* data, std::size_t bytes, int peer) override {
    const Session& s = session();
    finish(ncclSend(data, bytes, ncclInt8, peer, s.comm, launch_stream()), "ncclSend");
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    const Session& s = session();
    finish(ncclRecv(data, bytes, ncclInt8, peer, s.comm, launch_stream()), "ncclRecv");
  }
  void window(const void* out, void* in, std::size_t bytes, int sends, int recvs, int peer) override {
    const Session& s = session();
    const cudaStream_t stream = launch_stream();
    check(ncclGroupStart(), "ncclGroupStart");
    for (int w = 0; w < sends; ++w) check(ncclSend(out, bytes, ncclInt8, peer, s.comm, stream), "ncclSend");
    for (int w = 0; w < recvs; ++w) check(ncclRecv(in, bytes, ncclInt8, peer, s.comm, stream), "ncclRecv");
    finish(ncclGroupEnd(), "ncclGroupEnd");
  }
  void acknowledge(bool initiator, int peer) override {
    if (initiator) recv(ack_.data(), 1, peer);
    else send(ack_.data(), 1, peer);
  }

 private:
  Buffer ack_;
};

}  // namespace

std::unique_ptr<Transport> nccl_transport(const Options& options) { return std::make_unique<NcclTransport>(options); }

}  // namespace osu::nccl
