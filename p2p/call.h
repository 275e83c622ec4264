// P2PCall: one point-to-point call's arguments, normalized so that the int and large-count (_c)
// forms, and the blocking, nonblocking and persistent forms, of every entry point share one
// implementation. Building one only copies arguments.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>

#include "runtime/profile.h"

namespace mcrp {

enum class P2PKind : std::uint8_t {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) kind,
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
};

// "MPI_Send", ...: the blocking entry point's name, for messages.
const char* mpi_name(P2PKind kind);

struct P2PCall {
  P2PKind kind = P2PKind::send;
  const char* entry = "";  // the entry point called ("MPI_Isend_c"), for messages
  const void* sendbuf = nullptr;
  MPI_Count sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  int dest = MPI_PROC_NULL;
  int sendtag = 0;
  void* recvbuf = nullptr;  // Sendrecv_replace: the one buffer, sent then received into
  MPI_Count recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  int source = MPI_PROC_NULL;
  int recvtag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Message* message = nullptr;  // Mrecv: the matched message

  bool sends() const { return kind != P2PKind::recv && kind != P2PKind::mrecv; }
  // MPI_(I)Sendrecv or MPI_(I)Sendrecv_replace: a send and a receive in one call.
  bool sendrecv() const { return kind == P2PKind::sendrecv || kind == P2PKind::sendrecv_replace; }
  bool receives() const { return kind == P2PKind::recv || kind == P2PKind::mrecv || sendrecv(); }
  // A receive MPI completes at once with an empty message: from MPI_PROC_NULL, or an Mrecv of
  // MPI_MESSAGE_NO_PROC.
  bool receives_from_proc_null() const {
    if (!receives()) return false;
    return kind == P2PKind::mrecv ? message != nullptr && *message == MPI_MESSAGE_NO_PROC : source == MPI_PROC_NULL;
  }
};

// The base MPI's entry point for the call being routed, with its buffers, status and request
// replaceable: the staged path passes host images, its own status and its own inner request. The
// pmpi/ wrappers build it from a lambda whose parameters shadow the user's (see pmpi/p2p.def).
class P2PBaseCall {
 public:
  template <typename Fn>
  explicit P2PBaseCall(Fn& fn)
      : target_(&fn), invoke_([](void* target, const void* s, void* r, MPI_Request* q, MPI_Status* st) {
          return (*static_cast<Fn*>(target))(s, r, q, st);
        }) {}

  int operator()(const void* sendbuf, void* recvbuf, MPI_Request* request, MPI_Status* status) const {
    profile::StepTimer in_base_mpi(profile::Step::wait);
    return invoke_(target_, sendbuf, recvbuf, request, status);
  }

 private:
  void* target_;
  int (*invoke_)(void*, const void*, void*, MPI_Request*, MPI_Status*);
};

// A base call that outlives the wrapper (persistent requests start it at every MPI_Start).
using OwnedP2PBaseCall = std::function<int(const void*, void*, MPI_Request*, MPI_Status*)>;

// One builder per operation, taking exactly the arguments listed for it in pmpi/p2p.def.
namespace p2p_describe {

inline P2PCall send_like(P2PKind kind, const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm) {
  P2PCall call;
  call.kind = kind;
  call.sendbuf = buf;
  call.sendcount = count;
  call.sendtype = type;
  call.dest = dest;
  call.sendtag = tag;
  call.comm = comm;
  return call;
}
inline P2PCall send(const void* b, MPI_Count n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return send_like(P2PKind::send, b, n, t, dest, tag, c);
}
inline P2PCall ssend(const void* b, MPI_Count n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return send_like(P2PKind::ssend, b, n, t, dest, tag, c);
}
inline P2PCall bsend(const void* b, MPI_Count n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return send_like(P2PKind::bsend, b, n, t, dest, tag, c);
}
inline P2PCall rsend(const void* b, MPI_Count n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return send_like(P2PKind::rsend, b, n, t, dest, tag, c);
}
// Fills the receive side of `call`.
inline P2PCall& recv_side(P2PCall& call, void* buf, MPI_Count count, MPI_Datatype type, int source, int tag) {
  call.recvbuf = buf;
  call.recvcount = count;
  call.recvtype = type;
  call.source = source;
  call.recvtag = tag;
  return call;
}
inline P2PCall recv(void* b, MPI_Count n, MPI_Datatype t, int source, int tag, MPI_Comm c) {
  P2PCall call;
  call.kind = P2PKind::recv;
  call.comm = c;
  return recv_side(call, b, n, t, source, tag);
}
inline P2PCall sendrecv(const void* sb, MPI_Count sn, MPI_Datatype st, int dest, int stag, void* rb, MPI_Count rn,
                        MPI_Datatype rt, int source, int rtag, MPI_Comm c) {
  P2PCall call = send_like(P2PKind::sendrecv, sb, sn, st, dest, stag, c);
  return recv_side(call, rb, rn, rt, source, rtag);
}
inline P2PCall sendrecv_replace(void* b, MPI_Count n, MPI_Datatype t, int dest, int stag, int source, int rtag,
                                MPI_Comm c) {
  P2PCall call = sendrecv(b, n, t, dest, stag, b, n, t, source, rtag, c);
  call.kind = P2PKind::sendrecv_replace;
  return call;
}
inline P2PCall mrecv(void* b, MPI_Count n, MPI_Datatype t, MPI_Message* message) {
  P2PCall call = recv(b, n, t, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD);  // errors go to WORLD
  call.kind = P2PKind::mrecv;
  call.message = message;
  return call;
}

}  // namespace p2p_describe
}  // namespace mcrp
