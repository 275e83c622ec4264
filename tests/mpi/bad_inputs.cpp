#include "tests/mpi/bad_inputs.h"

#include <climits>

namespace mcrp_test {

const char* mistake_name(Mistake mistake) {
  switch (mistake) {
    case Mistake::null_buffer: return "null-buffer";
    case Mistake::null_counts: return "null-counts-array";
    case Mistake::negative_count: return "negative-count";
    case Mistake::overflowing_count: return "overflowing-count";
    case Mistake::counts_past_int_max: return "counts-past-INT_MAX(valid)";
    case Mistake::null_datatype: return "MPI_DATATYPE_NULL";
    case Mistake::uncommitted_datatype: return "uncommitted-datatype";
    case Mistake::null_op: return "MPI_OP_NULL";
    case Mistake::invalid_root: return "root=size";
    case Mistake::invalid_rank: return "rank=size";
    case Mistake::invalid_tag: return "tag=-5";
    case Mistake::comm_null: return "MPI_COMM_NULL";
    case Mistake::freed_comm: return "freed-comm";
    case Mistake::in_place_both_sides: return "MPI_IN_PLACE-both-sides";
    case Mistake::in_place_off_root: return "MPI_IN_PLACE-off-root";
    case Mistake::in_place_intercomm: return "MPI_IN_PLACE-intercomm";
    case Mistake::invalid_message: return "MPI_MESSAGE_NULL";
  }
  return "?";
}

BadTypes::BadTypes() {
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  MPI_Type_create_resized(MPI_INT, 0, MPI_Aint{1} << 33, &huge_extent);
  MPI_Type_commit(&huge_extent);
  MPI_Type_contiguous(0, MPI_INT, &zero_size);
  MPI_Type_commit(&zero_size);
}

BadTypes::~BadTypes() {
  MPI_Type_free(&uncommitted);
  MPI_Type_free(&huge_extent);
  MPI_Type_free(&zero_size);
}

namespace {

constexpr MPI_Count kBlock = 2;  // elements per block of the correct call
constexpr MPI_Count kOverflowingCount = (MPI_Count{1} << 61) + 1;  // times sizeof(int): past 2^63
constexpr MPI_Count kHalfIntMax = INT_MAX / 2 + 1;                 // two of them sum past INT_MAX

bool is_vector(Coll c) {
  return c == Coll::Allgatherv || c == Coll::Alltoallv || c == Coll::Gatherv || c == Coll::Scatterv ||
         c == Coll::Reduce_scatter;
}
// Unrooted collectives with an MPI_IN_PLACE form (scan and exscan: intracommunicators only).
bool unrooted_in_place(Coll c) { return !is_rooted(c) && c != Coll::Barrier; }
bool intercomm_capable(Coll c) { return c != Coll::Scan && c != Coll::Exscan; }

// The buffer, count and datatype significant on every rank (root 0) of each collective: a mistake
// there is one every rank makes.
enum class Side { send, recv };
Side buffer_side(Coll c) {
  return c == Coll::Reduce || c == Coll::Gather || c == Coll::Gatherv ? Side::send : Side::recv;
}

// MPICH 4.0.2's failures to report a collective mistake (found by running this test without the
// library, one case at a time; see docs/base-mpi-defects.md).
const char* collective_base_defect(Coll c, Mistake m) {
  switch (m) {
    case Mistake::overflowing_count:
      return "MPICH 4.0.2 does not check count * extent for overflow (aborts, crashes or moves nothing)";
    case Mistake::null_counts: return "MPICH 4.0.2 dereferences a NULL counts array";
    case Mistake::negative_count:
      if (c == Coll::Allreduce || c == Coll::Reduce_scatter_block || c == Coll::Scan || c == Coll::Reduce ||
          c == Coll::Exscan) {
        return "MPICH 4.0.2 does not check a negative count in allreduce, reduce, reduce_scatter_block, scan "
               "and exscan (crashes or aborts)";
      }
      return nullptr;
    case Mistake::in_place_off_root:
      return c == Coll::Reduce ? "MPICH 4.0.2 accepts MPI_IN_PLACE off the root of MPI_Reduce"
                               : "MPICH 4.0.2 dereferences MPI_IN_PLACE off the root of gather(v)/scatter(v)";
    case Mistake::in_place_both_sides:
      return c == Coll::Bcast ? "MPICH 4.0.2 dereferences MPI_IN_PLACE as MPI_Bcast's buffer" : nullptr;
    case Mistake::in_place_intercomm:
      return c == Coll::Allreduce ? nullptr : "MPICH 4.0.2 accepts MPI_IN_PLACE on an intercommunicator here";
    default:
      return nullptr;
  }
}

Expectation collective_expectation(Coll c, CountForm form, Mistake m, const BadComm& comm) {
  Expectation e;
  const bool barrier = c == Coll::Barrier;
  switch (m) {
    case Mistake::null_buffer: e.applicable = !barrier; e.error_class = MPI_ERR_BUFFER; break;
    case Mistake::null_counts:  // the vector forms whose counts array is significant on every rank
      e.applicable = c == Coll::Allgatherv || c == Coll::Alltoallv || c == Coll::Reduce_scatter;
      e.error_class = MPI_ERR_ARG;
      break;
    case Mistake::negative_count: e.applicable = !barrier; e.error_class = MPI_ERR_COUNT; break;
    case Mistake::overflowing_count:
      // The int form needs a derived type, which builtin reduction ops reject first.
      e.applicable = !barrier && (form == CountForm::large || !is_reduction(c));
      e.error_class = MPI_ERR_COUNT;
      break;
    case Mistake::counts_past_int_max:
      e.applicable = is_vector(c) && c != Coll::Reduce_scatter;  // zero-size types do not reduce
      e.error_class = MPI_SUCCESS;
      break;
    case Mistake::null_datatype:
    case Mistake::uncommitted_datatype:
      // MPICH checks the op against the datatype first: no builtin op is defined for either.
      e.applicable = !barrier;
      e.error_class = is_reduction(c) ? MPI_ERR_OP : MPI_ERR_TYPE;
      break;
    case Mistake::null_op: e.applicable = is_reduction(c); e.error_class = MPI_ERR_OP; break;
    case Mistake::invalid_root: e.applicable = is_rooted(c); e.error_class = MPI_ERR_ROOT; break;
    case Mistake::comm_null:
    case Mistake::freed_comm: e.applicable = true; e.error_class = MPI_ERR_COMM; break;
    case Mistake::in_place_both_sides:
      e.applicable = unrooted_in_place(c) || c == Coll::Bcast;
      e.error_class = MPI_ERR_BUFFER;
      break;
    case Mistake::in_place_off_root:
      e.applicable = is_rooted(c) && c != Coll::Bcast && comm.size > 1;
      e.error_class = MPI_ERR_BUFFER;
      break;
    case Mistake::in_place_intercomm:
      e.applicable = unrooted_in_place(c) && intercomm_capable(c);
      e.error_class = MPI_ERR_BUFFER;
      break;
    default: break;
  }
  if (comm.inter != (m == Mistake::in_place_intercomm)) e.applicable = false;
  if (e.applicable) e.base_defect = collective_base_defect(c, m);
  return e;
}

// The count of the side every rank passes significantly; arrays are set for every peer.
void set_count(Coll c, CollArgs& a, BadCall& call, MPI_Count value) {
  switch (c) {
    case Coll::Allreduce:
    case Coll::Reduce:
    case Coll::Bcast:
    case Coll::Scan:
    case Coll::Exscan: a.count = value; break;
    case Coll::Reduce_scatter_block: a.recvcount = value; break;
    case Coll::Scatter:
    case Coll::Scatterv: a.recvcount = value; break;
    case Coll::Reduce_scatter:
    case Coll::Alltoallv:
      for (MPI_Count& n : (c == Coll::Alltoallv ? call.counts : call.other_counts)) n = value;
      break;
    default: a.sendcount = value; break;  // allgather(v), alltoall, gather(v)
  }
}

void set_type(Coll c, CollArgs& a, MPI_Datatype type) {
  if (c == Coll::Scatter || c == Coll::Scatterv) {
    a.recvtype = type;
  } else if (is_reduction(c) || c == Coll::Bcast) {
    a.datatype = type;
  } else {
    a.sendtype = type;
  }
}

std::unique_ptr<BadCall> new_call(const BadComm& comm, MemorySpace& space) {
  auto call = std::make_unique<BadCall>();
  const int slots = 2 * (comm.size > comm.peers ? comm.size : comm.peers);
  const std::size_t elements = static_cast<std::size_t>(kBlock) * static_cast<std::size_t>(slots);
  call->send = std::make_unique<SpaceBuffer<int>>(space, std::vector<int>(elements, 1));
  call->recv = std::make_unique<SpaceBuffer<int>>(space, std::vector<int>(elements, 0));
  return call;
}

}  // namespace

std::unique_ptr<BadCall> bad_collective(Coll coll, CountForm form, Mistake mistake, const BadComm& comm,
                                        MPI_Comm freed, const BadTypes& types, MemorySpace& space) {
  const Expectation expect = collective_expectation(coll, form, mistake, comm);
  if (!expect.applicable) return nullptr;
  std::unique_ptr<BadCall> call = new_call(comm, space);
  call->expect = expect;
  // The correct call: blocks of kBlock ints per peer, root 0, MPI_SUM.
  const int blocks = comm.peers > comm.size ? comm.peers : comm.size;
  call->counts.assign(static_cast<std::size_t>(blocks), kBlock);        // sendcounts (alltoallv, scatterv)
  call->other_counts.assign(static_cast<std::size_t>(blocks), kBlock);  // recvcounts
  call->displs.resize(static_cast<std::size_t>(blocks));
  for (int i = 0; i < blocks; ++i) call->displs[i] = i * kBlock;
  CollArgs& a = call->coll;
  a.sendbuf = call->send->data();
  a.recvbuf = call->recv->data();
  a.count = a.sendcount = a.recvcount = kBlock;
  a.datatype = a.sendtype = a.recvtype = MPI_INT;
  a.sendcounts = call->counts.data();
  a.sdispls = call->displs.data();
  a.recvcounts = call->other_counts.data();
  a.rdispls = call->displs.data();
  a.op = MPI_SUM;
  a.root = 0;
  a.comm = comm.comm;
  const bool root = comm.rank == 0;
  auto null_side = [&](Side side) {
    if (side == Side::send) a.sendbuf = nullptr;
    else a.recvbuf = nullptr;
  };
  switch (mistake) {
    case Mistake::null_buffer: null_side(buffer_side(coll)); break;
    case Mistake::null_counts:
      if (coll == Coll::Alltoallv) a.sendcounts = nullptr;
      else a.recvcounts = nullptr;
      break;
    case Mistake::negative_count: set_count(coll, a, *call, -1); break;
    case Mistake::overflowing_count:
      if (form == CountForm::large) {
        set_count(coll, a, *call, kOverflowingCount);
      } else {
        set_count(coll, a, *call, INT_MAX);
        set_type(coll, a, types.huge_extent);
      }
      break;
    case Mistake::counts_past_int_max:
      a.sendcount = a.recvcount = kHalfIntMax;
      for (MPI_Count& n : call->counts) n = kHalfIntMax;
      for (MPI_Count& n : call->other_counts) n = kHalfIntMax;
      for (MPI_Aint& d : call->displs) d = 0;
      a.sendtype = a.recvtype = types.zero_size;
      break;
    case Mistake::null_datatype: set_type(coll, a, MPI_DATATYPE_NULL); break;
    case Mistake::uncommitted_datatype:  // two ints each: one element per block keeps the signatures
      set_type(coll, a, types.uncommitted);
      set_count(coll, a, *call, kBlock / 2);
      break;
    case Mistake::null_op: a.op = MPI_OP_NULL; break;
    case Mistake::invalid_root: a.root = comm.size; break;
    case Mistake::comm_null: a.comm = MPI_COMM_NULL; break;
    case Mistake::freed_comm: a.comm = freed; break;
    case Mistake::in_place_both_sides:
      a.sendbuf = MPI_IN_PLACE;
      a.recvbuf = MPI_IN_PLACE;
      break;
    case Mistake::in_place_off_root: {
      const Side side = coll == Coll::Scatter || coll == Coll::Scatterv ? Side::recv : Side::send;
      if (root) {
        null_side(side);
      } else if (side == Side::send) {
        a.sendbuf = MPI_IN_PLACE;
      } else {
        a.recvbuf = MPI_IN_PLACE;
      }
      break;
    }
    case Mistake::in_place_intercomm: a.sendbuf = MPI_IN_PLACE; break;
    default: break;
  }
  return call;
}

namespace {

bool sends(P2POp op) { return op != P2POp::Recv && op != P2POp::Mrecv; }

const char* p2p_base_defect(Mistake m) {
  return m == Mistake::overflowing_count
             ? "MPICH 4.0.2 does not check count * extent for overflow (moves nothing and succeeds)"
             : nullptr;
}

Expectation p2p_expectation(P2POp op, Mistake m, bool self_peer, const BadComm& comm) {
  Expectation e;
  const bool mrecv = op == P2POp::Mrecv;
  // A self-send whose mistake went unnoticed would leave a message behind (or wait forever for
  // Ssend): only the operations that are their own partner, with mistakes of the buffers.
  if (self_peer && ((op != P2POp::Sendrecv && op != P2POp::Sendrecv_replace) ||
                    (m != Mistake::null_buffer && m != Mistake::null_datatype && m != Mistake::uncommitted_datatype &&
                     m != Mistake::negative_count && m != Mistake::overflowing_count))) {
    return e;
  }
  switch (m) {
    case Mistake::null_buffer: e.applicable = true; e.error_class = MPI_ERR_BUFFER; break;
    case Mistake::negative_count:
    case Mistake::overflowing_count: e.applicable = true; e.error_class = MPI_ERR_COUNT; break;
    case Mistake::null_datatype:
    case Mistake::uncommitted_datatype: e.applicable = true; e.error_class = MPI_ERR_TYPE; break;
    case Mistake::invalid_rank: e.applicable = !mrecv; e.error_class = MPI_ERR_RANK; break;
    case Mistake::invalid_tag: e.applicable = !mrecv; e.error_class = MPI_ERR_TAG; break;
    case Mistake::comm_null:
    case Mistake::freed_comm: e.applicable = !mrecv; e.error_class = MPI_ERR_COMM; break;
    case Mistake::invalid_message: e.applicable = mrecv; e.error_class = MPI_ERR_REQUEST; break;
    default: break;
  }
  if (comm.inter) e.applicable = false;
  if (e.applicable) e.base_defect = p2p_base_defect(m);
  return e;
}

}  // namespace

std::unique_ptr<BadCall> bad_p2p(P2POp op, CountForm form, Mistake mistake, bool self_peer, const BadComm& comm,
                                 MPI_Comm freed, const BadTypes& types, MemorySpace& space) {
  const Expectation expect = p2p_expectation(op, mistake, self_peer, comm);
  if (!expect.applicable) return nullptr;
  std::unique_ptr<BadCall> call = new_call(comm, space);
  call->expect = expect;
  // The correct call: kBlock ints to and from MPI_PROC_NULL (no partner waits), tag 0.
  P2PArgs& a = call->p2p;
  a.sendbuf = call->send->data();
  a.recvbuf = call->recv->data();
  a.count = a.sendcount = a.recvcount = kBlock;
  a.datatype = a.sendtype = a.recvtype = MPI_INT;
  a.dest = a.source = self_peer ? comm.rank : MPI_PROC_NULL;
  a.comm = comm.comm;
  a.message = &call->message;
  // The operation's one buffer/count/type: the send side of sends, else the receive side
  // (Sendrecv: its receive side; its send side is the same shape).
  const bool send_side = sends(op) && op != P2POp::Sendrecv && op != P2POp::Sendrecv_replace;
  auto set_count = [&](MPI_Count n) { (op == P2POp::Sendrecv ? a.recvcount : a.count) = n; };
  auto set_type = [&](MPI_Datatype t) { (op == P2POp::Sendrecv ? a.recvtype : a.datatype) = t; };
  switch (mistake) {
    case Mistake::null_buffer:
      if (send_side) a.sendbuf = nullptr;
      else a.recvbuf = nullptr;
      break;
    case Mistake::negative_count: set_count(-1); break;
    case Mistake::overflowing_count:
      if (form == CountForm::large) {
        set_count(kOverflowingCount);
      } else {
        set_count(INT_MAX);
        set_type(types.huge_extent);
      }
      break;
    case Mistake::null_datatype: set_type(MPI_DATATYPE_NULL); break;
    case Mistake::uncommitted_datatype:
      set_type(types.uncommitted);
      set_count(kBlock / 2);
      break;
    case Mistake::invalid_rank:
      if (op == P2POp::Recv) a.source = comm.size;
      else a.dest = comm.size;
      break;
    case Mistake::invalid_tag:
      a.tag = a.sendtag = -5;  // Recv's tag, the sends' tag, Sendrecv(_replace)'s sendtag
      break;
    case Mistake::comm_null: a.comm = MPI_COMM_NULL; break;
    case Mistake::freed_comm: a.comm = freed; break;
    case Mistake::invalid_message: call->message = MPI_MESSAGE_NULL; break;
    default: break;
  }
  return call;
}

}  // namespace mcrp_test
