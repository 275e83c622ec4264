#include "tests/mpi/p2p_entry_points.h"

namespace mcrp_test {

const char* p2p_op_name(P2POp op) {
  static const char* const names[] = {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) #Name,
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
  };
  return names[static_cast<int>(op)];
}

bool has_persistent_form(P2POp op) {
  static const bool flags[] = {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, persistent, PARAMS, ARGS) (persistent) != 0,
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
  };
  return flags[static_cast<int>(op)];
}

namespace {

#define MCRP_UNPAREN(...) __VA_ARGS__

// The names pmpi/p2p.def's ARGS lists use, bound to the record's fields in one form's count type.
#define MCRP_TEST_BIND(COUNT)                                         \
  [[maybe_unused]] const void* sendbuf = a.sendbuf;                   \
  [[maybe_unused]] void* recvbuf = a.recvbuf;                         \
  [[maybe_unused]] COUNT count = static_cast<COUNT>(a.count);         \
  [[maybe_unused]] MPI_Datatype datatype = a.datatype;                \
  [[maybe_unused]] int dest = a.dest;                                 \
  [[maybe_unused]] int source = a.source;                             \
  [[maybe_unused]] int tag = a.tag;                                   \
  [[maybe_unused]] COUNT sendcount = static_cast<COUNT>(a.sendcount); \
  [[maybe_unused]] MPI_Datatype sendtype = a.sendtype;                \
  [[maybe_unused]] int sendtag = a.sendtag;                           \
  [[maybe_unused]] COUNT recvcount = static_cast<COUNT>(a.recvcount); \
  [[maybe_unused]] MPI_Datatype recvtype = a.recvtype;                \
  [[maybe_unused]] int recvtag = a.recvtag;                           \
  [[maybe_unused]] MPI_Comm comm = a.comm;                            \
  [[maybe_unused]] MPI_Message* message = a.message;

#define MCRP_TEST_BLOCKING_0(NAME, ARGS) s.rc = NAME ARGS;
#define MCRP_TEST_BLOCKING_1(NAME, ARGS) s.rc = NAME(MCRP_UNPAREN ARGS, status);
#define MCRP_TEST_PERSISTENT_0(NAME, ARGS) s.rc = MPI_ERR_INTERN;
#define MCRP_TEST_PERSISTENT_1(NAME, ARGS)                       \
  s.rc = NAME(MCRP_UNPAREN ARGS, &s.request);                    \
  s.persistent = true;                                           \
  if (s.rc == MPI_SUCCESS) s.rc = MPI_Start(&s.request);

#define MCRP_TEST_CASE(SUFFIX, Name, NonblockingName, receives, has_init, ARGS)                  \
  case P2POp::Name:                                                                              \
    switch (form) {                                                                              \
      case CallForm::blocking: MCRP_TEST_BLOCKING_##receives(MPI_##Name##SUFFIX, ARGS) break;    \
      case CallForm::nonblocking: s.rc = MPI_##NonblockingName##SUFFIX(MCRP_UNPAREN ARGS, &s.request); break; \
      case CallForm::persistent: MCRP_TEST_PERSISTENT_##has_init(MPI_##Name##_init##SUFFIX, ARGS) break; \
    }                                                                                            \
    break;

Started start_narrow(P2POp op, CallForm form, const P2PArgs& a, MPI_Status* status) {
  Started s;
  MCRP_TEST_BIND(int)
  switch (op) {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, has_init, PARAMS, ARGS) \
    MCRP_TEST_CASE(, Name, NonblockingName, receives, has_init, ARGS)
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
  }
  return s;
}

Started start_large(P2POp op, CallForm form, const P2PArgs& a, MPI_Status* status) {
  Started s;
  MCRP_TEST_BIND(MPI_Count)
  switch (op) {
#define MCRPMPI_P2P(Name, NonblockingName, kind, receives, has_init, PARAMS, ARGS) \
    MCRP_TEST_CASE(_c, Name, NonblockingName, receives, has_init, ARGS)
#include "pmpi/p2p.def"
#undef MCRPMPI_P2P
  }
  return s;
}

}  // namespace

Started start_p2p(P2POp op, CallForm form, CountForm counts, const P2PArgs& args, MPI_Status* status) {
  return counts == CountForm::large ? start_large(op, form, args, status) : start_narrow(op, form, args, status);
}

int finish_p2p(Started& started, MPI_Status* status) {
  int rc = started.rc;
  if (rc == MPI_SUCCESS && started.request != MPI_REQUEST_NULL) rc = MPI_Wait(&started.request, status);
  if (started.persistent && started.request != MPI_REQUEST_NULL) {
    const int freed = MPI_Request_free(&started.request);
    if (rc == MPI_SUCCESS) rc = freed;
  }
  return rc;
}

}  // namespace mcrp_test
