// The communicators, datatypes and ops the library's own requests use stay valid until those
// requests are done with them, whatever the program frees meanwhile.
//
// MPI lets a program free a communicator, a datatype or a user-defined op as soon as a nonblocking
// operation or a persistent request using it exists: MPI_Comm_free, MPI_Type_free and MPI_Op_free
// only mark the object, which goes with its last use ("any pending operations that use this
// communicator will complete normally"). The base MPI keeps such references for its own requests;
// the library holds them here for its own:
// - a persistent request (device buffers, and the host collectives the base MPI gets wrong) passes
//   its communicator, datatypes and op to the base MPI again at every MPI_Start: held until
//   MPI_Request_free (runtime/persistent.h);
// - a nonblocking operation may pack or unpack with its datatypes after the call has returned (the
//   NCCL path's strided outputs, device-only point-to-point, the pipelined staged path): held until
//   it finishes (runtime/requests.h). Its communicator and op reach the base MPI before the call
//   returns, or are not needed again (the NCCL communicator and the protocol engine are the
//   library's); an error after a free is raised as the base MPI raises one on a freed communicator.
// While a handle is held, the library's MPI_Comm_free, MPI_Type_free and MPI_Op_free set the
// caller's handle to the null handle at once and leave the base MPI's free to the last release.
// MPI_Comm_disconnect frees a communicator at once whatever holds it: those holds are then dropped
// without a free of their own (runtime/disconnect.h).
// The base MPI's own references are not visible through MPI, and MPI_Op has no way to take one
// (MPI_Type_dup exists, but would change what MPI_Type_get_envelope reports), hence the library's
// own count. Predefined handles cost nothing: they are never held.
#pragma once
#include <mpi.h>

#include <initializer_list>
#include <utility>
#include <vector>

namespace mcrp {

enum class HandleKind { comm, datatype, op };

// The handles one operation holds, released when it is destroyed. Holding is a value copy: no MPI
// call, so an argument MPI ignores (garbage) may be held, which at most puts off a free of an
// object that happens to have that handle. Predefined and null handles are never held.
class HandleHolds {
 public:
  HandleHolds() = default;
  ~HandleHolds() { release(); }
  HandleHolds(HandleHolds&& other) noexcept : held_(std::move(other.held_)) { other.held_.clear(); }
  HandleHolds& operator=(HandleHolds&& other) noexcept;
  HandleHolds(const HandleHolds&) = delete;
  HandleHolds& operator=(const HandleHolds&) = delete;

  // The usual set: a call's communicator, its datatypes and its op (MPI_OP_NULL: none).
  static HandleHolds of(MPI_Comm comm, std::initializer_list<MPI_Datatype> types, MPI_Op op = MPI_OP_NULL);

  void hold_comm(MPI_Comm comm);
  void hold_datatype(MPI_Datatype type);
  void hold_op(MPI_Op op);

  // MPI_Comm_disconnect has freed `comm` in the base MPI: drops this hold on it without a free of
  // its own, so that a new communicator given the same handle is not mistaken for it. True when
  // `comm` was held here.
  bool forget_disconnected(MPI_Comm comm);

 private:
  void hold(HandleKind kind, int handle);
  void release();

  std::vector<std::pair<HandleKind, int>> held_;
};

// MPI_Comm_free, MPI_Type_free, MPI_Op_free: the base MPI's free; for a held handle, the null
// handle in *handle now and the base MPI's free when the last hold goes (a second free of it
// meanwhile is reported as the base MPI reports a freed handle). One atomic load when nothing is held.
int free_comm(MPI_Comm* comm);
int free_datatype(MPI_Datatype* type);
int free_op(MPI_Op* op);
// Before MPI_Comm_disconnect: a held communicator the program has already freed is reported as a
// second MPI_Comm_free is (MPI_ERR_COMM, raised on MPI_COMM_WORLD); MPI_SUCCESS otherwise.
int check_not_freed(MPI_Comm comm, const char* call);

}  // namespace mcrp

// How many distinct handles the library holds now: 0 once every library request is freed or
// finished (tests).
extern "C" int mcrpmpi_held_handle_count();
