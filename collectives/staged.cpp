// The staged path: what NCCL cannot do on device buffers still runs, on the base MPI, through
// pinned host copies (this is what makes a non-CUDA-aware base MPI CUDA-aware). The copying,
// ordering and waiting is the staged core's (runtime/staged_sides.h); this file hands it a routed
// collective, or the pipelined staged path a large one.
#include <utility>

#include "collectives/paths.h"
#include "collectives/staged_pipeline.h"
#include "runtime/staged_sides.h"

namespace mcrp {
namespace {

// A routed collective's base call: through call_base, which substitutes fp16 reductions and
// avoids the base MPI's known defects.
class RoutedBase final : public StagedBase {
 public:
  RoutedBase(const BaseCall& base, const CollCall& call) : base_(base), call_(call) {}
  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request) const override {
    return call_base(base_, call_, sendbuf, recvbuf, request);
  }

 private:
  const BaseCall& base_;
  const CollCall& call_;
};

StagedSides sides_of(const Prepared& p) {
  StagedSides sides;
  sides.send = p.layout.send;
  sides.recv = p.layout.recv;
  sides.send_type = p.send_type;
  sides.recv_type = p.recv_type;
  sides.sendbuf = p.call->sendbuf;
  sides.recvbuf = p.call->recvbuf;
  sides.device = p.device;
  return sides;
}

}  // namespace

Status run_staged(const Prepared& p, const BaseCall& base, bool copy) {
  if (copy) {
    if (auto pipelined = plan_pipelined(p)) return run_pipelined(std::move(pipelined));
  }
  // The layout is the sides: no copy of it for a blocking call.
  return run_staged_sides(p.layout.send, p.send_type, p.layout.recv, p.recv_type, p.call->sendbuf, p.call->recvbuf,
                          p.device, RoutedBase(base, *p.call), copy);
}

Status start_staged(const Prepared& p, const BaseCall& base, bool copy, MPI_Request* request) {
  if (copy) {
    if (auto pipelined = plan_pipelined(p)) return start_pipelined(std::move(pipelined), request);
  }
  return start_staged_sides(sides_of(p), RoutedBase(base, *p.call), copy, p.call->comm,
                            nonblocking_mpi_name(p.call->kind), request);
}

}  // namespace mcrp
