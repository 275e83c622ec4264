// The base MPI's own entry point for the call being routed, as a non-owning callable whose buffer
// arguments can be replaced (the staged path passes host copies). The pmpi/ wrappers build it from a
// lambda; see pmpi/collectives.def for why the lambda's parameters shadow the user's buffers.
#pragma once
#include <mpi.h>

#include <utility>

namespace mcrp {

class BaseCall {
 public:
  template <typename Fn>
  explicit BaseCall(Fn& fn)
      : target_(&fn), invoke_([](void* target, const void* s, void* r, MPI_Request* q) {
          return (*static_cast<Fn*>(target))(s, r, q);
        }) {}

  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request = nullptr) const {
    return invoke_(target_, sendbuf, recvbuf, request);
  }

 private:
  void* target_;
  int (*invoke_)(void*, const void*, void*, MPI_Request*);
};

}  // namespace mcrp
