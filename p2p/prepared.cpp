#include "p2p/prepared.h"

namespace mcrp {
namespace {

BufferSide side(const void* base, MPI_Datatype type, MPI_Count count, bool read, bool written) {
  BufferSide s;
  s.base = static_cast<char*>(const_cast<void*>(base));
  s.type = type;
  s.blocks = {Block{0, count}};
  s.read = read;
  s.written = written;
  return s;
}

}  // namespace

void describe_sides(const P2PCall& c, P2PPrepared* p) {
  p->call = &c;
  p->send = p->recv = BufferSide();
  const bool sends = c.sends() && c.dest != MPI_PROC_NULL;
  const bool no_message = c.kind == P2PKind::mrecv && c.message == nullptr;
  const bool receives = c.receives() && !c.receives_from_proc_null() && !no_message;
  if (c.kind == P2PKind::sendrecv_replace) {
    if (sends || receives) p->recv = side(c.recvbuf, c.recvtype, c.recvcount, sends, receives);
    return;
  }
  if (sends) p->send = side(c.sendbuf, c.sendtype, c.sendcount, true, false);
  if (receives) p->recv = side(c.recvbuf, c.recvtype, c.recvcount, false, true);
}

}  // namespace mcrp
