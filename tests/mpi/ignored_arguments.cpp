#include "tests/mpi/ignored_arguments.h"

#include <cstdint>
#include <numeric>

#include "tests/mpi/values.h"

namespace mcrp_test {
namespace {

constexpr MPI_Count kBadCount = -1;
constexpr MPI_Count kPlausibleCount = 5;
constexpr MPI_Datatype kBadType = MPI_DATATYPE_NULL;

// Distinct value sources across the two groups of an intercommunicator.
int key_of(int group, int rank) { return group * 16 + rank; }

// Every case's values differ from the previous case's, so a result left in a buffer the library
// reuses (a staging image from its pool) cannot pass for a call that delivered nothing: that hid
// MPICH's nonblocking intercommunicator bcast defect on the fake device while the blocking form ran
// right before it. Counted per communicator, whose members all build the same cases in the same
// order (ranks of different split groups do not).
int g_case_salt = 0;
MPI_Comm g_salted_comm = MPI_COMM_NULL;
int salted(int key) { return key + 64 * g_case_salt; }
int value(int key, MPI_Count i) { return value_of<int>(salted(key), i); }
int block(int from_key, int to_key, MPI_Count i) { return block_value<int>(salted(from_key), to_key, i); }

// Per-sender counts of the v-collectives: uneven, and zero for some senders.
MPI_Count varied(MPI_Count n, int key) { return n == 0 || key % 3 == 1 ? 0 : n + key % 4; }
// Alltoallv counts between two ranks; symmetric, so an in-place exchange is well defined.
MPI_Count pairwise(MPI_Count n, int a, int b) { return n == 0 ? 0 : n + (a + b) % 2; }

// Blocks of the given counts with a one-element gap after each (displacement 0 first: MPICH 4.0.2
// ignores displs[0] of a one-rank allgatherv, see tests/mpi/base_mpi_quirks.h).
std::vector<MPI_Aint> spaced(const std::vector<MPI_Count>& counts) {
  std::vector<MPI_Aint> displs;
  MPI_Aint next = 0;
  for (MPI_Count c : counts) {
    displs.push_back(next);
    next += c + 1;
  }
  return displs;
}
MPI_Aint extent_of(const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs) {
  return counts.empty() ? 1 : displs.back() + counts.back() + 1;
}

// Builds one rank's case. `me` and `peer(s)` are value keys; the peers are the ranks blocks are
// exchanged with (everyone on an intracommunicator, the remote group on an intercommunicator).
class Builder {
 public:
  Builder(const CaseComm& comm, const Variant& v, MemorySpace& space, Case& out)
      : comm_(comm), v_(v), space_(space), c_(out) {
    c_.args.comm = comm.comm;
    c_.args.op = MPI_SUM;
  }

  int me() const { return key_of(comm_.group, comm_.rank); }
  int peer(int s) const { return comm_.inter ? key_of(1 - comm_.group, s) : key_of(0, s); }
  int peers() const { return comm_.peers; }
  MPI_Count n() const { return v_.n; }
  bool in_place() const { return v_.in_place; }
  // The pointer given for ignored buffers: NULL when the variant asks, else a poison pointer, which
  // crashes where dereferenced.
  void* ignored_buffer() const {
    return v_.null_buffers ? nullptr : reinterpret_cast<void*>(static_cast<std::uintptr_t>(1));
  }
  // -1, or with null buffers a count that looks valid (a program passing its one count everywhere):
  // a base MPI that checks a buffer or type because the count is above 0 is caught so.
  MPI_Count ignored_count() const { return v_.null_buffers ? kPlausibleCount : kBadCount; }

  // Rooted collectives: this rank's role and root argument, and the root's value key.
  enum class Role { root, member, bystander };
  Role role() const {
    if (!comm_.inter) return comm_.rank == v_.root ? Role::root : Role::member;
    if (comm_.group != v_.root_group) return Role::member;
    return comm_.rank == v_.root ? Role::root : Role::bystander;
  }
  int root_argument() const {
    if (!comm_.inter) return v_.root;
    if (comm_.group != v_.root_group) return v_.root;
    return comm_.rank == v_.root ? MPI_ROOT : MPI_PROC_NULL;
  }
  int root_key() const { return key_of(comm_.inter ? v_.root_group : 0, v_.root); }

  // A significant input buffer holding `values`.
  int* input(const std::vector<int>& values) {
    c_.inputs.push_back(std::make_unique<SpaceBuffer<int>>(space_, values));
    return c_.inputs.back()->data();
  }
  // A significant output buffer holding `initial`, expected to hold `expected` (first `checked`
  // elements) afterwards.
  int* output(const std::vector<int>& initial, std::vector<int> expected, std::size_t checked) {
    CheckedBuffer b;
    b.buffer = std::make_unique<SpaceBuffer<int>>(space_, initial);
    b.expected = std::move(expected);
    b.checked = checked;
    c_.outputs.push_back(std::move(b));
    return c_.outputs.back().buffer->data();
  }
  int* output(const std::vector<int>& initial, const std::vector<int>& expected) {
    return output(initial, expected, expected.size());
  }
  void ignore(const char* what) {
    if (!c_.description.empty()) c_.description += ",";
    c_.description += what;
  }

  // n values of `key` plus a trailing sentinel.
  std::vector<int> values_of(int key, MPI_Count count) const {
    std::vector<int> v(static_cast<std::size_t>(count) + 1, sentinel<int>());
    for (MPI_Count i = 0; i < count; ++i) v[i] = value(key, i);
    return v;
  }
  std::vector<int> sentinels(std::size_t count) const { return std::vector<int>(count, sentinel<int>()); }

  // Per-peer blocks laid out by counts/displs, element i of block s = fn(s, i); gaps keep sentinels.
  template <class Fn>
  std::vector<int> blocks(const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs, Fn fn) const {
    std::vector<int> v(static_cast<std::size_t>(extent_of(counts, displs)), sentinel<int>());
    for (std::size_t s = 0; s < counts.size(); ++s)
      for (MPI_Count i = 0; i < counts[s]; ++i) v[displs[s] + i] = fn(static_cast<int>(s), i);
    return v;
  }
  std::vector<MPI_Count> uniform(MPI_Count count) const {
    return std::vector<MPI_Count>(static_cast<std::size_t>(peers()), count);
  }
  std::vector<MPI_Aint> packed(MPI_Count count) const {
    std::vector<MPI_Aint> d(static_cast<std::size_t>(peers()));
    for (int s = 0; s < peers(); ++s) d[s] = s * count;
    return d;
  }

  const CaseComm& comm_;
  const Variant& v_;
  MemorySpace& space_;
  Case& c_;
};

using Role = Builder::Role;

// ---- reductions --------------------------------------------------------------------------------

void allreduce(Builder& b) {
  Case& c = b.c_;
  std::vector<int> expected = b.sentinels(b.n() + 1);
  for (MPI_Count i = 0; i < b.n(); ++i)
    for (int s = 0; s < b.peers(); ++s) expected[i] = (s == 0 ? 0 : expected[i]) + value(b.peer(s), i);
  c.args.count = b.n();
  c.args.datatype = MPI_INT;
  if (b.in_place()) {
    c.args.sendbuf = MPI_IN_PLACE;
    c.args.recvbuf = b.output(b.values_of(b.me(), b.n()), expected);
  } else {
    c.args.sendbuf = b.input(b.values_of(b.me(), b.n()));
    c.args.recvbuf = b.output(b.sentinels(b.n() + 1), expected);
  }
}

// Sum over the peers of value(peer, offset + i), i < count, plus a trailing sentinel.
std::vector<int> reduced(const Builder& b, MPI_Count offset, MPI_Count count) {
  std::vector<int> v(static_cast<std::size_t>(count) + 1, sentinel<int>());
  for (MPI_Count i = 0; i < count; ++i) {
    v[i] = 0;
    for (int s = 0; s < b.peers(); ++s) v[i] += value(b.peer(s), offset + i);
  }
  return v;
}

void reduce(Builder& b) {
  Case& c = b.c_;
  c.args.count = b.n();
  c.args.datatype = MPI_INT;
  c.args.root = b.root_argument();
  switch (b.role()) {
    case Role::root:
      if (b.comm_.inter) {
        c.args.sendbuf = b.ignored_buffer();
        b.ignore("sendbuf");
        c.args.recvbuf = b.output(b.sentinels(b.n() + 1), reduced(b, 0, b.n()));
      } else if (b.in_place()) {
        c.args.sendbuf = MPI_IN_PLACE;
        c.args.recvbuf = b.output(b.values_of(b.me(), b.n()), reduced(b, 0, b.n()));
      } else {
        c.args.sendbuf = b.input(b.values_of(b.me(), b.n()));
        c.args.recvbuf = b.output(b.sentinels(b.n() + 1), reduced(b, 0, b.n()));
      }
      break;
    case Role::member:
      c.args.sendbuf = b.input(b.values_of(b.me(), b.n()));
      c.args.recvbuf = b.ignored_buffer();
      b.ignore("recvbuf");
      break;
    case Role::bystander:
      c.args.sendbuf = b.ignored_buffer();
      c.args.recvbuf = b.ignored_buffer();
      c.args.count = b.ignored_count();
      c.args.datatype = kBadType;
      c.args.op = MPI_OP_NULL;
      b.ignore("sendbuf,recvbuf,count,datatype,op");
      break;
  }
}

// The reduce-scatter vector of `recvcounts` (local group), reduced over the peers, this rank's part.
void reduce_scatter_part(Builder& b, const std::vector<MPI_Count>& recvcounts) {
  Case& c = b.c_;
  const MPI_Count total = std::accumulate(recvcounts.begin(), recvcounts.end(), MPI_Count{0});
  MPI_Count offset = 0;
  for (int r = 0; r < b.comm_.rank; ++r) offset += recvcounts[r];
  const MPI_Count mine = recvcounts[b.comm_.rank];
  const std::vector<int> expected = reduced(b, offset, mine);
  if (b.in_place()) {
    // MPI defines only the first `mine` elements afterwards.
    c.args.sendbuf = MPI_IN_PLACE;
    c.args.recvbuf = b.output(b.values_of(b.me(), total), expected, static_cast<std::size_t>(mine));
  } else {
    c.args.sendbuf = b.input(b.values_of(b.me(), total));
    c.args.recvbuf = b.output(b.sentinels(mine + 1), expected);
  }
}

// Intercommunicators: each group's vector is its own size times recvcount, and the two vectors must
// have one length, so the block per rank is n times the other group's size.
MPI_Count reduce_scatter_block_count(const Builder& b) { return b.comm_.inter ? b.n() * b.peers() : b.n(); }

void reduce_scatter_block(Builder& b) {
  b.c_.args.recvcount = reduce_scatter_block_count(b);
  b.c_.args.datatype = MPI_INT;
  reduce_scatter_part(b, std::vector<MPI_Count>(static_cast<std::size_t>(b.comm_.size), b.c_.args.recvcount));
}

void reduce_scatter(Builder& b) {
  Case& c = b.c_;
  c.args.datatype = MPI_INT;
  c.recvcounts.resize(static_cast<std::size_t>(b.comm_.size));
  for (int r = 0; r < b.comm_.size; ++r) {
    c.recvcounts[r] = b.comm_.inter ? reduce_scatter_block_count(b) : varied(b.n(), r);
  }
  c.args.recvcounts = c.recvcounts.data();
  reduce_scatter_part(b, c.recvcounts);
}

// Scan and exscan (intracommunicators only): rank r gets the sum over ranks <= r (scan) or < r.
void scan_like(Builder& b, bool exclusive) {
  Case& c = b.c_;
  c.args.count = b.n();
  c.args.datatype = MPI_INT;
  const int last = exclusive ? b.comm_.rank - 1 : b.comm_.rank;
  std::vector<int> expected = b.sentinels(b.n() + 1);
  for (MPI_Count i = 0; i < b.n(); ++i) {
    expected[i] = 0;
    for (int s = 0; s <= last; ++s) expected[i] += value(key_of(0, s), i);
  }
  // Exscan leaves rank 0's receive buffer undefined.
  const std::size_t checked = exclusive && b.comm_.rank == 0 ? 0 : expected.size();
  const std::vector<int> mine = b.values_of(b.me(), b.n());
  if (b.in_place()) {
    c.args.sendbuf = MPI_IN_PLACE;
    c.args.recvbuf = b.output(mine, expected, checked);
  } else {
    c.args.sendbuf = b.input(mine);
    c.args.recvbuf = b.output(b.sentinels(b.n() + 1), expected, checked);
  }
}

// ---- data movement --------------------------------------------------------------------------------

void bcast(Builder& b) {
  Case& c = b.c_;
  c.args.count = b.n();
  c.args.datatype = MPI_INT;
  c.args.root = b.root_argument();
  const std::vector<int> data = b.values_of(b.root_key(), b.n());
  switch (b.role()) {
    case Role::root: c.args.recvbuf = b.output(data, data); break;
    case Role::member: c.args.recvbuf = b.output(b.sentinels(b.n() + 1), data); break;
    case Role::bystander:
      // MPICH 4.0.2 checks the count of MPI_PROC_NULL ranks here (it rejects -1, and a nonzero count
      // with MPI_DATATYPE_NULL), so the count is 0 rather than garbage.
      c.args.recvbuf = b.ignored_buffer();
      c.args.count = 0;
      c.args.datatype = kBadType;
      b.ignore("buffer,datatype");
      break;
  }
}

// Allgather and allgatherv: block s of the receive buffer holds peer s's values.
void allgather_like(Builder& b, const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs,
                    MPI_Count mine) {
  Case& c = b.c_;
  c.args.recvtype = MPI_INT;
  const std::vector<int> expected = b.blocks(counts, displs, [&](int s, MPI_Count i) { return value(b.peer(s), i); });
  if (b.in_place()) {
    c.args.sendbuf = MPI_IN_PLACE;
    c.args.sendcount = b.ignored_count();
    c.args.sendtype = kBadType;
    b.ignore("sendcount,sendtype");
    std::vector<int> initial = b.sentinels(expected.size());
    for (MPI_Count i = 0; i < mine; ++i) initial[displs[b.comm_.rank] + i] = value(b.me(), i);
    c.args.recvbuf = b.output(initial, expected);
  } else {
    c.args.sendbuf = b.input(b.values_of(b.me(), mine));
    c.args.sendcount = mine;
    c.args.sendtype = MPI_INT;
    c.args.recvbuf = b.output(b.sentinels(expected.size()), expected);
  }
}

void allgather(Builder& b) {
  b.c_.args.recvcount = b.n();
  allgather_like(b, b.uniform(b.n()), b.packed(b.n()), b.n());
}

void allgatherv(Builder& b) {
  Case& c = b.c_;
  for (int s = 0; s < b.peers(); ++s) c.recvcounts.push_back(varied(b.n(), b.peer(s)));
  c.rdispls = spaced(c.recvcounts);
  c.args.recvcounts = c.recvcounts.data();
  c.args.rdispls = c.rdispls.data();
  allgather_like(b, c.recvcounts, c.rdispls, varied(b.n(), b.me()));
}

// Alltoall and alltoallv: block d of the send buffer goes to peer d; block s received from peer s.
void alltoall_like(Builder& b, const std::vector<MPI_Count>& sendcounts, const std::vector<MPI_Aint>& sdispls,
                   const std::vector<MPI_Count>& recvcounts, const std::vector<MPI_Aint>& rdispls, bool vector_form) {
  Case& c = b.c_;
  c.args.recvtype = MPI_INT;
  const std::vector<int> expected =
      b.blocks(recvcounts, rdispls, [&](int s, MPI_Count i) { return block(b.peer(s), b.me(), i); });
  const std::vector<int> outgoing =
      b.blocks(sendcounts, sdispls, [&](int d, MPI_Count i) { return block(b.me(), b.peer(d), i); });
  if (b.in_place()) {
    c.args.sendbuf = MPI_IN_PLACE;
    c.args.sendtype = kBadType;
    if (vector_form) {
      c.args.sendcounts = nullptr;
      c.args.sdispls = nullptr;
      b.ignore("sendcounts,sdispls,sendtype");
    } else {
      c.args.sendcount = b.ignored_count();
      b.ignore("sendcount,sendtype");
    }
    // In place, each block goes out from where its reply lands (the counts are symmetric).
    c.args.recvbuf = b.output(b.blocks(recvcounts, rdispls, [&](int d, MPI_Count i) { return block(b.me(), b.peer(d), i); }),
                              expected);
  } else {
    c.args.sendbuf = b.input(outgoing);
    c.args.sendtype = MPI_INT;
    c.args.recvbuf = b.output(b.sentinels(expected.size()), expected);
  }
}

void alltoall(Builder& b) {
  b.c_.args.sendcount = b.n();
  b.c_.args.recvcount = b.n();
  alltoall_like(b, b.uniform(b.n()), b.packed(b.n()), b.uniform(b.n()), b.packed(b.n()), false);
}

void alltoallv(Builder& b) {
  Case& c = b.c_;
  for (int s = 0; s < b.peers(); ++s) {
    c.sendcounts.push_back(pairwise(b.n(), b.me(), b.peer(s)));
    c.recvcounts.push_back(pairwise(b.n(), b.peer(s), b.me()));
  }
  c.sdispls = spaced(c.sendcounts);
  c.rdispls = spaced(c.recvcounts);
  c.args.sendcounts = c.sendcounts.data();
  c.args.sdispls = c.sdispls.data();
  c.args.recvcounts = c.recvcounts.data();
  c.args.rdispls = c.rdispls.data();
  alltoall_like(b, c.sendcounts, c.sdispls, c.recvcounts, c.rdispls, true);
}

// The two sides of a rooted collective's arguments.
enum class Side { send, recv };

// Fills one side's ignored arguments with garbage: its count (or, in a v-form's many-blocks side,
// counts and displs) and type, and its buffer unless `keep_buffer` (MPI_IN_PLACE stays in it).
void ignore_side(Builder& b, Side side, bool vector_counts, bool keep_buffer) {
  CollArgs& a = b.c_.args;
  const bool send = side == Side::send;
  (send ? a.sendtype : a.recvtype) = kBadType;
  if (vector_counts) {
    (send ? a.sendcounts : a.recvcounts) = nullptr;
    (send ? a.sdispls : a.rdispls) = nullptr;
  } else {
    (send ? a.sendcount : a.recvcount) = b.ignored_count();
  }
  if (!keep_buffer && send) a.sendbuf = b.ignored_buffer();
  if (!keep_buffer && !send) a.recvbuf = b.ignored_buffer();
  std::string what = keep_buffer ? "" : (send ? "sendbuf," : "recvbuf,");
  what += vector_counts ? (send ? "sendcounts,displs," : "recvcounts,displs,") : (send ? "sendcount," : "recvcount,");
  what += send ? "sendtype" : "recvtype";
  b.ignore(what.c_str());
}

// Gather and gatherv: the root's block s holds what peer s sent it.
void gather_like(Builder& b, const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs,
                 MPI_Count mine, bool vector_form) {
  Case& c = b.c_;
  c.args.root = b.root_argument();
  const int root = b.root_key();
  auto ignore_receive_side = [&] { ignore_side(b, Side::recv, vector_form, false); };
  auto ignore_send_side = [&](bool buffer_too) { ignore_side(b, Side::send, false, !buffer_too); };
  switch (b.role()) {
    case Role::root: {
      c.args.recvtype = MPI_INT;
      const std::vector<int> expected = b.blocks(counts, displs, [&](int s, MPI_Count i) { return block(b.peer(s), root, i); });
      std::vector<int> initial = b.sentinels(expected.size());
      if (b.comm_.inter) {
        ignore_send_side(true);
      } else if (b.in_place()) {
        c.args.sendbuf = MPI_IN_PLACE;
        ignore_send_side(false);
        for (MPI_Count i = 0; i < mine; ++i) initial[displs[b.comm_.rank] + i] = block(b.me(), root, i);
      } else {
        std::vector<int> own = b.sentinels(mine + 1);
        for (MPI_Count i = 0; i < mine; ++i) own[i] = block(b.me(), root, i);
        c.args.sendbuf = b.input(own);
        c.args.sendcount = mine;
        c.args.sendtype = MPI_INT;
      }
      c.args.recvbuf = b.output(initial, expected);
      break;
    }
    case Role::member: {
      std::vector<int> own = b.sentinels(mine + 1);
      for (MPI_Count i = 0; i < mine; ++i) own[i] = block(b.me(), root, i);
      c.args.sendbuf = b.input(own);
      c.args.sendcount = mine;
      c.args.sendtype = MPI_INT;
      ignore_receive_side();
      break;
    }
    case Role::bystander:
      ignore_send_side(true);
      ignore_receive_side();
      break;
  }
}

void gather(Builder& b) {
  b.c_.args.recvcount = b.n();
  gather_like(b, b.uniform(b.n()), b.packed(b.n()), b.n(), false);
}

void gatherv(Builder& b) {
  Case& c = b.c_;
  for (int s = 0; s < b.peers(); ++s) c.recvcounts.push_back(varied(b.n(), b.peer(s)));
  c.rdispls = spaced(c.recvcounts);
  c.args.recvcounts = c.recvcounts.data();
  c.args.rdispls = c.rdispls.data();
  gather_like(b, c.recvcounts, c.rdispls, varied(b.n(), b.me()), true);
}

// Scatter and scatterv: the root's block d goes to peer d.
void scatter_like(Builder& b, const std::vector<MPI_Count>& counts, const std::vector<MPI_Aint>& displs,
                  MPI_Count mine, bool vector_form) {
  Case& c = b.c_;
  c.args.root = b.root_argument();
  const int root = b.root_key();
  auto ignore_send_side = [&] { ignore_side(b, Side::send, vector_form, false); };
  auto ignore_receive_side = [&](bool buffer_too) { ignore_side(b, Side::recv, false, !buffer_too); };
  std::vector<int> expected = b.sentinels(mine + 1);
  for (MPI_Count i = 0; i < mine; ++i) expected[i] = block(root, b.me(), i);
  switch (b.role()) {
    case Role::root: {
      c.args.sendtype = MPI_INT;
      const std::vector<int> data = b.blocks(counts, displs, [&](int d, MPI_Count i) { return block(root, b.peer(d), i); });
      c.args.sendbuf = b.output(data, data);  // must stay as it was
      if (b.comm_.inter) {
        ignore_receive_side(true);
      } else if (b.in_place()) {
        c.args.recvbuf = MPI_IN_PLACE;
        ignore_receive_side(false);
      } else {
        c.args.recvbuf = b.output(b.sentinels(mine + 1), expected);
        c.args.recvcount = mine;
        c.args.recvtype = MPI_INT;
      }
      break;
    }
    case Role::member:
      c.args.recvbuf = b.output(b.sentinels(mine + 1), expected);
      c.args.recvcount = mine;
      c.args.recvtype = MPI_INT;
      ignore_send_side();
      break;
    case Role::bystander:
      ignore_send_side();
      ignore_receive_side(true);
      break;
  }
}

void scatter(Builder& b) {
  b.c_.args.sendcount = b.n();
  scatter_like(b, b.uniform(b.n()), b.packed(b.n()), b.n(), false);
}

void scatterv(Builder& b) {
  Case& c = b.c_;
  for (int s = 0; s < b.peers(); ++s) c.sendcounts.push_back(varied(b.n(), b.peer(s)));
  c.sdispls = spaced(c.sendcounts);
  c.args.sendcounts = c.sendcounts.data();
  c.args.sdispls = c.sdispls.data();
  scatter_like(b, c.sendcounts, c.sdispls, varied(b.n(), b.me()), true);
}

// MPI_IN_PLACE exists for these on intracommunicators (bcast and barrier have no send buffer).
bool has_in_place(Coll coll) { return coll != Coll::Bcast && coll != Coll::Barrier; }

}  // namespace

// The int forms copy max(size, peers) entries of every array (tests/mpi/entry_points.cpp): pad the
// shorter ones (an intercommunicator's local-group array) with entries MPI never reads, so that the
// copy stays inside them.
template <class T>
void pad(std::vector<T>& values, const T*& pointer, std::size_t n) {
  if (pointer == nullptr || pointer != values.data() || values.size() >= n) return;
  values.resize(n, T{0});
  pointer = values.data();
}

std::unique_ptr<Case> build_case(Coll coll, const CaseComm& comm, const Variant& v, MemorySpace& space) {
  auto c = std::make_unique<Case>();
  const bool scan = coll == Coll::Scan || coll == Coll::Exscan;
  if (v.in_place && (comm.inter || !has_in_place(coll))) return c;
  if (comm.inter && scan) return c;
  if (!is_rooted(coll) && (v.root != 0 || v.root_group != 0)) return c;  // one root value suffices
  c->applicable = true;
  if (comm.comm != g_salted_comm) {
    g_salted_comm = comm.comm;
    g_case_salt = 0;
  }
  g_case_salt = (g_case_salt + 1) % 1000;
  Builder b(comm, v, space, *c);
  switch (coll) {
    case Coll::Allreduce: allreduce(b); break;
    case Coll::Reduce: reduce(b); break;
    case Coll::Bcast: bcast(b); break;
    case Coll::Allgather: allgather(b); break;
    case Coll::Allgatherv: allgatherv(b); break;
    case Coll::Reduce_scatter: reduce_scatter(b); break;
    case Coll::Reduce_scatter_block: reduce_scatter_block(b); break;
    case Coll::Alltoall: alltoall(b); break;
    case Coll::Alltoallv: alltoallv(b); break;
    case Coll::Gather: gather(b); break;
    case Coll::Gatherv: gatherv(b); break;
    case Coll::Scatter: scatter(b); break;
    case Coll::Scatterv: scatterv(b); break;
    case Coll::Barrier: break;
    case Coll::Scan: scan_like(b, false); break;
    case Coll::Exscan: scan_like(b, true); break;
  }
  const std::size_t n = static_cast<std::size_t>(comm.peers > comm.size ? comm.peers : comm.size);
  pad(c->sendcounts, c->args.sendcounts, n);
  pad(c->recvcounts, c->args.recvcounts, n);
  pad(c->sdispls, c->args.sdispls, n);
  pad(c->rdispls, c->args.rdispls, n);
  return c;
}

}  // namespace mcrp_test
