// Collectives drawn at random, for the interleavings no hand-written case thinks of. Every rank
// draws the same plan from the seed and the round number: a round is two to eight collectives (any
// of the sixteen: every reduction, movement and vector form, barrier), each on one of several
// communicators (MPI_COMM_WORLD, a duplicate, one with the ranks reversed, two halves split by
// parity), in blocking, nonblocking or persistent form, int or large-count, in place or not, over
// one of six datatypes (MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_INT64_T, MPI_UNSIGNED_CHAR, MPI_SHORT:
// NCCL's and staged ones) and four ops (sum, max, min, bitwise or: NCCL's and staged ones), on
// device or host memory, with counts from 0 up and vector forms' blocks apart by gaps.
//
// Each rank issues the round's nonblocking and persistent collectives in an order of its own: the
// plan's order on each communicator, as MPI requires, but communicators interleaved differently on
// every rank, as MPI allows. Blocking ones are fences: every rank issues all that comes before one
// before it, and all that comes after it after it (a rank blocked in one that its peer had not yet
// reached, because the peer first waits on another communicator's, is an erroneous program). At a
// fence a rank may first complete some of its outstanding requests (its own choice of them, and of
// Waitall or Wait one by one); the round ends with every rank completing the rest by Waitall,
// Waitany, Waitsome, Testsome, Testall or Wait in reverse, then checking every result against one
// computed from the plan (gaps and the element past each buffer must keep their sentinel). Rounds
// follow each other without a barrier, so one round's late collectives meet the next one's early.
// The first element of each block is distinct per rank and collective, so a misplaced block shows.
//
//   --space S (host | fake-device | device)  --rounds N (100)  --seed N (20261129)  --round R (replay)
//   --max-elements N (16384)  --comms N (4)  --threads T (1): T threads a rank at
//   MPI_THREAD_MULTIPLE, each with rounds (seed + thread) and communicators of its own
//   --avoid-mpich-defects: leaves out what plain MPICH 4.0.2 gets wrong (for runs without the library)
//   --fresh-comms: the duplicate and the half made anew every round and freed by each rank at a
//     point of its own, their collectives perhaps outstanding (see Comms); and at every fence,
//     after a rank's early completions, a communicator made from the world one and freed at once
//     (MPI_Comm_dup and MPI_Comm_split in turn), while the rank's other requests are outstanding
// A failure names its round, seed and collective; MCRP_TEST_TRACE=1 prints every call first.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/entry_points.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/random_rounds.h"

namespace {

using namespace mcrp_test;

constexpr long long kSentinel = 99;  // above every value and result below
constexpr long long kAny = -1;       // an expected element MPI leaves undefined: not checked

struct ElementType {
  MPI_Datatype type;
  std::size_t bytes;
  bool integral;
  const char* name;
};
const ElementType kTypes[] = {{MPI_INT, 4, true, "MPI_INT"},           {MPI_FLOAT, 4, false, "MPI_FLOAT"},
                              {MPI_DOUBLE, 8, false, "MPI_DOUBLE"},    {MPI_INT64_T, 8, true, "MPI_INT64_T"},
                              {MPI_UNSIGNED_CHAR, 1, true, "MPI_UNSIGNED_CHAR"}, {MPI_SHORT, 2, true, "MPI_SHORT"}};
constexpr int kTypeCount = sizeof(kTypes) / sizeof(kTypes[0]);

template <class T>
void put(unsigned char* at, long long v) {
  const T x = static_cast<T>(v);
  std::memcpy(at, &x, sizeof x);
}
template <class T>
long long get(const unsigned char* at) {
  T x;
  std::memcpy(&x, at, sizeof x);
  return static_cast<long long>(x);
}

// Values are small whole numbers, exact in every type.
std::vector<unsigned char> encode(const ElementType& t, const std::vector<long long>& values) {
  std::vector<unsigned char> bytes(values.size() * t.bytes);
  for (std::size_t i = 0; i < values.size(); ++i) {
    unsigned char* at = bytes.data() + i * t.bytes;
    switch (t.bytes) {
      case 1: put<unsigned char>(at, values[i]); break;
      case 2: put<short>(at, values[i]); break;
      case 4: t.integral ? put<std::int32_t>(at, values[i]) : put<float>(at, values[i]); break;
      default: t.integral ? put<std::int64_t>(at, values[i]) : put<double>(at, values[i]); break;
    }
  }
  return bytes;
}

std::vector<long long> decode(const ElementType& t, const std::vector<unsigned char>& bytes) {
  std::vector<long long> values(bytes.size() / t.bytes);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const unsigned char* at = bytes.data() + i * t.bytes;
    switch (t.bytes) {
      case 1: values[i] = get<unsigned char>(at); break;
      case 2: values[i] = get<short>(at); break;
      case 4: values[i] = t.integral ? get<std::int32_t>(at) : get<float>(at); break;
      default: values[i] = t.integral ? get<std::int64_t>(at) : get<double>(at); break;
    }
  }
  return values;
}

struct Reduction {
  MPI_Op op;
  const char* name;
  bool integral_only;
};
const Reduction kReductions[] = {
    {MPI_SUM, "MPI_SUM", false}, {MPI_MAX, "MPI_MAX", false}, {MPI_MIN, "MPI_MIN", false}, {MPI_BOR, "MPI_BOR", true}};

long long combine(const Reduction& r, long long a, long long b) {
  if (r.op == MPI_SUM) return a + b;
  if (r.op == MPI_MAX) return std::max(a, b);
  if (r.op == MPI_MIN) return std::min(a, b);
  return a | b;
}

// Element j of rank r's input to collective `id`: 1 to 11, and at a block's first element
// distinct for up to 11 ranks (sums of up to 8 ranks stay below the sentinel).
long long value(int r, int id, MPI_Count j) { return ((r + 1) * 7 + j * 5 + id * 3) % 11 + 1; }

struct Draw {
  std::mt19937_64 rng;
  int below(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool coin() { return below(2) == 1; }
  // A fifth empty, the rest log-uniform up to max.
  MPI_Count size(MPI_Count max) {
    if (below(5) == 0 || max <= 0) return 0;
    int bits = 0;
    while ((MPI_Count{1} << (bits + 1)) <= max) ++bits;
    const MPI_Count top = MPI_Count{1} << below(bits + 1);
    return std::min<MPI_Count>(max, top + static_cast<MPI_Count>(rng() % static_cast<std::uint64_t>(top)));
  }
};

constexpr int kCommKinds = 4;
constexpr const char* kCommNames[kCommKinds] = {"world", "duplicate", "reversed", "half"};

// One collective of a round, as every rank draws it. Per-rank quantities are indexed by rank in
// the collective's communicator (a half has the first size/2 or so of them).
struct Op {
  int id;
  Coll coll;
  int comm;
  int root_draw;  // the root is root_draw % the communicator's size
  MPI_Count n;    // per rank (or per pair) for the regular forms
  CallForm form;
  CountForm counts;
  bool in_place;
  int type;
  int reduction;
  bool host;
  std::vector<MPI_Count> block;  // vector forms: rank r's count; alltoallv: [src * size + dst]
  std::vector<MPI_Count> gap;    // vector forms: elements left before rank r's block
};

bool has_in_place(Coll c) { return c != Coll::Alltoallv && c != Coll::Bcast && c != Coll::Barrier; }

Op draw_op(Draw& d, int id, int world_size, int comms, MPI_Count max_elements, bool host_only) {
  Op op{};
  op.id = id;
  op.coll = kAllColls[d.below(static_cast<int>(sizeof(kAllColls) / sizeof(kAllColls[0])))];
  op.comm = d.below(comms);
  op.root_draw = d.below(world_size);
  const bool per_rank_blocks = op.coll == Coll::Allgather || op.coll == Coll::Gather || op.coll == Coll::Scatter ||
                               op.coll == Coll::Alltoall || op.coll == Coll::Reduce_scatter_block;
  op.n = d.size(per_rank_blocks ? max_elements / world_size : max_elements);
  op.form = kCallForms[d.below(3)];
  op.counts = d.coin() ? CountForm::large : CountForm::narrow;
  op.in_place = has_in_place(op.coll) && d.below(3) == 0;
  op.type = d.below(kTypeCount);
  do {
    op.reduction = d.below(4);
  } while (kReductions[op.reduction].integral_only && !kTypes[op.type].integral);
  op.host = host_only || d.below(4) == 0;
  const int blocks = op.coll == Coll::Alltoallv ? world_size * world_size : world_size;
  for (int k = 0; k < blocks; ++k) {
    op.block.push_back(d.size(max_elements / world_size / (op.coll == Coll::Alltoallv ? world_size : 1)));
    op.gap.push_back(d.below(3));
  }
  return op;
}

struct Round {
  int number = 0;
  std::vector<Op> ops;  // the plan's order
};

// Plain MPICH 4.0.2 (docs/base-mpi-defects.md), for the runs without the library, which check
// the test's own premises: its persistent gather, allgather and scatter are wrong, its Allgatherv
// on one rank ignores displs[0], its in-place reduce at a root other than 0 crashes, its in-place
// reduce_scatter with large uneven blocks aborts, its MPI_Testall fails over a persistent
// collective and its Waitany, Waitsome and Testsome return an inactive one again and again (the
// last two avoided where the completion is chosen: Waitall or Wait only). Changes the plan only
// after it is drawn.
void avoid_mpich_defects(Op& op) {
  if (op.form == CallForm::persistent &&
      (op.coll == Coll::Gather || op.coll == Coll::Allgather || op.coll == Coll::Scatter)) {
    op.form = CallForm::nonblocking;
  }
  if (op.coll == Coll::Allgatherv) op.gap[0] = 0;
  if (op.coll == Coll::Reduce || op.coll == Coll::Reduce_scatter) op.in_place = false;
}

Round draw_round(std::uint64_t seed, int number, int world_size, int comms, MPI_Count max_elements, bool host_only,
                 bool avoid_defects) {
  Draw d{std::mt19937_64(seed * 1000003ULL + static_cast<std::uint64_t>(number))};
  Round round;
  round.number = number;
  const int count = 2 + d.below(7);
  for (int k = 0; k < count; ++k) {
    round.ops.push_back(draw_op(d, k, world_size, comms, max_elements, host_only));
    if (avoid_defects) avoid_mpich_defects(round.ops.back());
  }
  return round;
}

// The communicators of one thread, by kind; each call uses its rank and size in the one it names.
// With --fresh-comms the duplicate and the half are made anew for every round (the duplicate by
// MPI_Comm_dup or MPI_Comm_idup, the half split by parity or into a lower and an upper part, by
// round) and freed by each rank at a point of its own once it has issued its last collective on
// them, those perhaps still outstanding: MPI_Comm_free only marks a communicator for deallocation,
// its pending operations complete normally, and the base MPI may hand the freed handle to the
// next communicator made while the library still holds work of the old one.
constexpr bool kFreshKind[kCommKinds] = {false, true, false, true};

class Comms {
 public:
  Comms(int count, MPI_Comm world, int round, bool fresh_comms) : count_(count), fresh_comms_(fresh_comms) {
    comms_[0] = world;
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    for (int k = 1; k < count; ++k) make(k, round);
  }
  ~Comms() {
    for (MPI_Comm& comm : comms_) {
      if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    }
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  MPI_Comm comm(int k) const { return comms_[k]; }
  // Made anew every round (--fresh-comms only).
  bool fresh(int k) const { return fresh_comms_ && k < count_ && kFreshKind[k]; }
  bool fresh_comms() const { return fresh_comms_; }

  // Makes again, for round `round`, every fresh communicator freed in the round before.
  void remake_freed(int round) {
    for (int k = 0; k < count_; ++k) {
      if (fresh(k) && comms_[k] == MPI_COMM_NULL) make(k, round);
    }
  }
  int free(int k) { return MPI_Comm_free(&comms_[k]); }
  // A constructor collective over the world communicator, which every rank makes at the same
  // fence: a rank blocked inside one must not starve a peer that first waits for this rank's
  // outstanding collectives (runtime/base_collective_meeting.h). Returns what went wrong, or "".
  std::string make_and_free_at_fence(int fence) {
    const MPI_Comm world = comms_[0];
    MPI_Comm made = MPI_COMM_NULL;
    const int rank = rank_of(world);
    const int rc = fence % 2 == 0 ? MPI_Comm_dup(world, &made) : MPI_Comm_split(world, rank % 2, rank, &made);
    if (rc != MPI_SUCCESS || made == MPI_COMM_NULL) {
      return std::string(fence % 2 == 0 ? "MPI_Comm_dup" : "MPI_Comm_split") + " returned " + std::to_string(rc);
    }
    return MPI_Comm_free(&made) == MPI_SUCCESS ? "" : "MPI_Comm_free of the communicator made at a fence failed";
  }

 private:
  void make(int kind, int round) {
    const MPI_Comm world = comms_[0];
    const int rank = rank_of(world), size = size_of(world);
    MPI_Comm& made = comms_[kind];
    if (kind == 1 && round % 2 == 1) {
      MPI_Request request = MPI_REQUEST_NULL;
      MPI_Comm_idup(world, &made, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (kind == 1) {
      MPI_Comm_dup(world, &made);
    } else if (kind == 2) {
      MPI_Comm_split(world, 0, size - 1 - rank, &made);
    } else {
      MPI_Comm_split(world, round % 2 == 0 ? rank % 2 : (2 * rank >= size ? 1 : 0), rank, &made);
    }
    MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
  }

  int count_;
  bool fresh_comms_;
  MPI_Comm comms_[kCommKinds] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
};

// Displacements of blocks laid out one after another, each after its gap; returns the total.
MPI_Count lay_out(const MPI_Count* counts, const MPI_Count* gaps, int n, std::vector<MPI_Aint>* displs) {
  MPI_Count at = 0;
  displs->clear();
  for (int r = 0; r < n; ++r) {
    at += gaps[r];
    displs->push_back(static_cast<MPI_Aint>(at));
    at += counts[r];
  }
  return at;
}

// What one rank passes to one collective and what it must find afterwards, in element values.
struct Local {
  bool send_in_place = false;  // sendbuf = MPI_IN_PLACE
  bool recv_in_place = false;  // recvbuf = MPI_IN_PLACE (scatter's root)
  bool recv_null = false;      // recvbuf not significant here: passed as null
  std::vector<long long> send;      // the send buffer's contents (unused when in place)
  std::vector<long long> recv;      // the receive buffer before the call
  std::vector<long long> expected;  // ... and after it (kAny: undefined)
  std::vector<MPI_Count> sendcounts, recvcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
};

std::vector<long long> inputs(int r, int id, MPI_Count from, MPI_Count n) {
  std::vector<long long> v(static_cast<std::size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(r, id, from + i);
  return v;
}

// The reduction over ranks [first, last] of element j.
long long reduced(const Op& op, int first, int last, MPI_Count j) {
  long long acc = value(first, op.id, j);
  for (int r = first + 1; r <= last; ++r) acc = combine(kReductions[op.reduction], acc, value(r, op.id, j));
  return acc;
}

void place(std::vector<long long>& to, MPI_Count at, const std::vector<long long>& from) {
  std::copy(from.begin(), from.end(), to.begin() + at);
}

Local local_part(const Op& op, int me, int p) {
  Local l;
  const int root = op.root_draw % p;
  const MPI_Count n = op.n;
  const auto sized = [](MPI_Count count) { return std::vector<long long>(static_cast<std::size_t>(count), kSentinel); };
  const auto reduction_of = [&](int first, int last, MPI_Count from, MPI_Count count) {
    std::vector<long long> v(static_cast<std::size_t>(count));
    for (MPI_Count i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = reduced(op, first, last, from + i);
    return v;
  };
  const MPI_Count* block = op.block.data();
  const MPI_Count* gap = op.gap.data();
  switch (op.coll) {
    case Coll::Barrier: break;
    case Coll::Allreduce:
    case Coll::Scan:
    case Coll::Exscan: {
      l.send = inputs(me, op.id, 0, n);
      l.send_in_place = op.in_place;
      l.recv = op.in_place ? l.send : sized(n);
      if (op.coll == Coll::Allreduce) l.expected = reduction_of(0, p - 1, 0, n);
      else if (op.coll == Coll::Scan) l.expected = reduction_of(0, me, 0, n);
      else l.expected = me == 0 ? std::vector<long long>(static_cast<std::size_t>(n), kAny) : reduction_of(0, me - 1, 0, n);
      break;
    }
    case Coll::Reduce: {
      l.send = inputs(me, op.id, 0, n);
      if (me == root) {
        l.send_in_place = op.in_place;
        l.recv = op.in_place ? l.send : sized(n);
        l.expected = reduction_of(0, p - 1, 0, n);
      } else {
        l.recv_null = true;
      }
      break;
    }
    case Coll::Bcast:
      l.recv = me == root ? inputs(root, op.id, 0, n) : sized(n);
      l.expected = inputs(root, op.id, 0, n);
      break;
    case Coll::Allgather:
    case Coll::Gather: {
      l.send = inputs(me, op.id, 0, n);
      if (op.coll == Coll::Gather && me != root) {
        l.recv_null = true;
        break;
      }
      l.send_in_place = op.in_place;
      l.recv = sized(n * p);
      if (op.in_place) place(l.recv, me * n, l.send);
      l.expected = sized(n * p);
      for (int r = 0; r < p; ++r) place(l.expected, r * n, inputs(r, op.id, 0, n));
      break;
    }
    case Coll::Allgatherv:
    case Coll::Gatherv: {
      l.send = inputs(me, op.id, 0, block[me]);
      l.recvcounts.assign(block, block + p);
      const MPI_Count total = lay_out(block, gap, p, &l.rdispls);
      if (op.coll == Coll::Gatherv && me != root) {
        l.recv_null = true;
        break;
      }
      l.send_in_place = op.in_place;
      l.recv = sized(total);
      if (op.in_place) place(l.recv, l.rdispls[static_cast<std::size_t>(me)], l.send);
      l.expected = sized(total);
      for (int r = 0; r < p; ++r) place(l.expected, l.rdispls[static_cast<std::size_t>(r)], inputs(r, op.id, 0, block[r]));
      break;
    }
    case Coll::Scatter: {
      if (me == root) l.send = inputs(root, op.id, 0, n * p);
      const std::vector<long long> mine = inputs(root, op.id, me * n, n);
      if (me == root && op.in_place) {
        l.recv_in_place = true;  // the root's block stays in its send buffer: that is checked
        l.expected = l.send;
      } else {
        l.recv = sized(n);
        l.expected = mine;
      }
      break;
    }
    case Coll::Scatterv: {
      std::vector<MPI_Aint> displs;
      const MPI_Count total = lay_out(block, gap, p, &displs);
      if (me == root) {
        l.sendcounts.assign(block, block + p);
        l.sdispls = displs;
        l.send = inputs(root, op.id, 0, total);
      }
      if (me == root && op.in_place) {
        l.recv_in_place = true;
        l.expected = l.send;
      } else {
        l.recv = sized(block[me]);
        l.expected = inputs(root, op.id, displs[static_cast<std::size_t>(me)], block[me]);
      }
      break;
    }
    case Coll::Alltoall: {
      l.send = inputs(me, op.id, 0, n * p);
      l.send_in_place = op.in_place;
      l.recv = op.in_place ? l.send : sized(n * p);
      l.expected = sized(n * p);
      for (int s = 0; s < p; ++s) place(l.expected, s * n, inputs(s, op.id, me * n, n));
      break;
    }
    case Coll::Alltoallv: {
      // block[s * p + d]: what s sends d; the gaps before d's block in s's buffer and before s's
      // block in d's are gap[d] and gap[s].
      const auto row = [&](int s) {
        std::vector<MPI_Count> counts(static_cast<std::size_t>(p));
        for (int d = 0; d < p; ++d) counts[static_cast<std::size_t>(d)] = block[s * p + d];
        return counts;
      };
      l.sendcounts = row(me);
      const MPI_Count send_total = lay_out(l.sendcounts.data(), gap, p, &l.sdispls);
      l.send = inputs(me, op.id, 0, send_total);
      for (int s = 0; s < p; ++s) l.recvcounts.push_back(block[s * p + me]);
      const MPI_Count recv_total = lay_out(l.recvcounts.data(), gap, p, &l.rdispls);
      l.recv = sized(recv_total);
      l.expected = sized(recv_total);
      for (int s = 0; s < p; ++s) {
        std::vector<MPI_Aint> their_displs;
        const std::vector<MPI_Count> their = row(s);
        lay_out(their.data(), gap, p, &their_displs);
        place(l.expected, l.rdispls[static_cast<std::size_t>(s)],
              inputs(s, op.id, their_displs[static_cast<std::size_t>(me)], block[s * p + me]));
      }
      break;
    }
    case Coll::Reduce_scatter_block:
    case Coll::Reduce_scatter: {
      std::vector<MPI_Count> counts(static_cast<std::size_t>(p), n);
      if (op.coll == Coll::Reduce_scatter) counts.assign(block, block + p);
      MPI_Count offset = 0, total = 0;
      for (int r = 0; r < p; ++r) {
        if (r < me) offset += counts[static_cast<std::size_t>(r)];
        total += counts[static_cast<std::size_t>(r)];
      }
      if (op.coll == Coll::Reduce_scatter) l.recvcounts = counts;
      l.send = inputs(me, op.id, 0, total);
      l.send_in_place = op.in_place;
      const MPI_Count mine = counts[static_cast<std::size_t>(me)];
      l.recv = op.in_place ? l.send : sized(mine);
      l.expected = op.in_place ? std::vector<long long>(static_cast<std::size_t>(total), kAny) : sized(mine);
      place(l.expected, 0, reduction_of(0, p - 1, offset, mine));
      break;
    }
  }
  return l;
}

// Bytes in a memory space, the element past the end included (a sentinel), released on destruction.
class Buffer {
 public:
  Buffer(MemorySpace& space, const ElementType& type, std::vector<long long> values)
      : space_(space), type_(type), count_(values.size()) {
    values.push_back(kSentinel);
    const std::vector<unsigned char> bytes = encode(type, values);
    data_ = space.allocate(bytes.size());
    space.upload(data_, bytes.data(), bytes.size());
  }
  ~Buffer() { space_.release(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  std::vector<long long> read() const {  // the sentinel past the end included
    std::vector<unsigned char> bytes((count_ + 1) * type_.bytes);
    space_.download(bytes.data(), data_, bytes.size());
    return decode(type_, bytes);
  }

 private:
  MemorySpace& space_;
  const ElementType& type_;
  std::size_t count_;
  void* data_ = nullptr;
};

struct Job {
  Checker& checker;
  MemorySpace& device;  // the --space memory
  MemorySpace& host;
  Comms& comms;
  int comm_count;
  int world_rank;
  int world_size;
  std::uint64_t seed;
  MPI_Count max_elements;
  bool host_only;
  bool avoid_defects;  // --avoid-mpich-defects
  bool trace;
  int thread;  // -1 when the rank runs one thread
};

std::string describe(const Op& op) {
  std::string what = std::string(coll_name(op.coll)) + " #" + std::to_string(op.id) + " " +
                     call_form_name(op.form) + " " + form_name(op.counts) + " on " + kCommNames[op.comm] +
                     " n=" + std::to_string(op.n) + " " + kTypes[op.type].name;
  if (is_reduction(op.coll)) what += std::string(" ") + kReductions[op.reduction].name;
  if (is_rooted(op.coll)) what += " root " + std::to_string(op.root_draw) + "%size";
  if (op.in_place) what += " in place";
  return what + (op.host ? " host" : " device");
}

std::string where(const Job& job, const Round& round) {
  return "round " + std::to_string(round.number) + " (seed " + std::to_string(job.seed) + ") rank " +
         std::to_string(job.world_rank) + (job.thread >= 0 ? " thread " + std::to_string(job.thread) : std::string());
}

// One collective as this rank makes it: its buffers, its request, its check.
class Issued {
 public:
  Issued(const Job& job, const Op& op) : op_(op) {
    const MPI_Comm comm = job.comms.comm(op.comm);
    const int me = rank_of(comm), p = size_of(comm);
    local_ = local_part(op, me, p);
    MemorySpace& space = op.host ? job.host : job.device;
    const ElementType& type = kTypes[op.type];
    send_ = std::make_unique<Buffer>(space, type, local_.send);
    if (!local_.recv_in_place && !local_.recv_null) recv_ = std::make_unique<Buffer>(space, type, local_.recv);
    args_.sendbuf = local_.send_in_place ? MPI_IN_PLACE : send_->data();
    args_.recvbuf = local_.recv_in_place ? MPI_IN_PLACE : recv_ ? recv_->data() : nullptr;
    // This rank's own block: its count in a vector form, the common one otherwise.
    const MPI_Count own = op.coll == Coll::Allgatherv || op.coll == Coll::Gatherv || op.coll == Coll::Scatterv
                              ? op.block[static_cast<std::size_t>(me)]
                              : op.n;
    args_.count = op.n;
    args_.datatype = type.type;
    args_.sendcount = own;
    args_.sendtype = type.type;
    args_.recvcount = own;
    args_.recvtype = type.type;
    args_.sendcounts = local_.sendcounts.empty() ? nullptr : local_.sendcounts.data();
    args_.sdispls = local_.sdispls.empty() ? nullptr : local_.sdispls.data();
    args_.recvcounts = local_.recvcounts.empty() ? nullptr : local_.recvcounts.data();
    args_.rdispls = local_.rdispls.empty() ? nullptr : local_.rdispls.data();
    args_.op = kReductions[op.reduction].op;
    args_.root = op.root_draw % p;
    args_.comm = comm;
    array_size_ = p;
  }

  // Starts (or, blocking, makes) the call; false when it failed (then recorded).
  bool start(const Job& job, const Round& round) {
    if (job.trace) std::fprintf(stderr, "trace: %s: %s\n", where(job, round).c_str(), describe(op_).c_str());
    const int rc = start_collective(op_.coll, op_.form, op_.counts, args_, array_size_, &request_);
    job.checker.check(rc == MPI_SUCCESS, where(job, round) + ": " + describe(op_) + ": start returned " + std::to_string(rc));
    return rc == MPI_SUCCESS;
  }
  MPI_Request* request() { return &request_; }
  void check_completion(const Job& job, const Round& round, int error, const char* how) {
    if (error != MPI_SUCCESS) {
      job.checker.check(false, where(job, round) + ": " + describe(op_) + ": " + how + " gave error " + std::to_string(error));
    }
  }
  bool persistent() const { return op_.form == CallForm::persistent; }

  // After completion: frees a persistent request and compares the result with the plan's.
  void finish(const Job& job, const Round& round) {
    if (persistent() && request_ != MPI_REQUEST_NULL) MPI_Request_free(&request_);
    const Buffer* result = local_.recv_in_place ? send_.get() : recv_.get();
    if (result == nullptr) return;
    std::vector<long long> expected = local_.expected;
    expected.push_back(kSentinel);
    const std::vector<long long> got = result->read();
    const std::string what = where(job, round) + ": " + describe(op_);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] != kAny && got[i] != expected[i]) {
        job.checker.check(false, what + ": element " + std::to_string(i) + " of " + std::to_string(expected.size() - 1) +
                                     " expected " + std::to_string(expected[i]) + " got " + std::to_string(got[i]));
        return;
      }
    }
    job.checker.check(true, what);
  }

 private:
  const Op& op_;
  Local local_;
  std::unique_ptr<Buffer> send_, recv_;
  CollArgs args_;
  int array_size_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

enum class Completion { waitall, waitany, waitsome, testsome, testall, wait_reversed };
constexpr int kCompletions = 6;
constexpr const char* kCompletionNames[kCompletions] = {"Waitall", "Waitany", "Waitsome", "Testsome", "Testall",
                                                        "Wait in reverse"};

// Completes every request by `how`; statuses[i] is request i's (its MPI_ERROR set by every method).
int complete(Completion how, std::vector<MPI_Request>& requests, std::vector<MPI_Status>& statuses) {
  const int n = static_cast<int>(requests.size());
  statuses.assign(requests.size(), MPI_Status{});
  for (MPI_Status& status : statuses) status.MPI_ERROR = MPI_SUCCESS;
  std::vector<int> indices(requests.size());
  std::vector<MPI_Status> some(requests.size());
  int rc = MPI_SUCCESS;
  switch (how) {
    case Completion::waitall: return MPI_Waitall(n, requests.data(), statuses.data());
    case Completion::waitany:
      for (;;) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        rc = MPI_Waitany(n, requests.data(), &index, &status);
        if (index == MPI_UNDEFINED) return rc;
        status.MPI_ERROR = rc;
        statuses[static_cast<std::size_t>(index)] = status;
      }
    case Completion::waitsome:
    case Completion::testsome:
      for (;;) {
        int done = 0;
        rc = how == Completion::waitsome ? MPI_Waitsome(n, requests.data(), &done, indices.data(), some.data())
                                         : MPI_Testsome(n, requests.data(), &done, indices.data(), some.data());
        if (done == MPI_UNDEFINED || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) return rc;
        for (int k = 0; k < done; ++k) statuses[static_cast<std::size_t>(indices[k])] = some[k];
      }
    case Completion::testall:
      for (int flag = 0; rc == MPI_SUCCESS && !flag;) rc = MPI_Testall(n, requests.data(), &flag, statuses.data());
      return rc;
    case Completion::wait_reversed:
      for (int i = n - 1; i >= 0; --i) {
        const auto k = static_cast<std::size_t>(i);
        statuses[k].MPI_ERROR = MPI_Wait(&requests[k], &statuses[k]);
        if (rc == MPI_SUCCESS) rc = statuses[k].MPI_ERROR;
      }
      return rc;
  }
  return MPI_ERR_INTERN;
}

// Completes the given started collectives by `how` (their requests written back: null, or a
// persistent one inactive); a failure names the collective.
void complete_all(const Job& job, const Round& round, std::vector<Issued*>& started, Completion how) {
  std::vector<MPI_Request> requests;
  for (Issued* issued : started) requests.push_back(*issued->request());
  std::vector<MPI_Status> statuses;
  const int rc = complete(how, requests, statuses);
  for (std::size_t i = 0; i < started.size(); ++i) {
    *started[i]->request() = requests[i];
    const int error = rc == MPI_ERR_IN_STATUS || how == Completion::waitany || how == Completion::wait_reversed
                          ? statuses[i].MPI_ERROR
                          : rc;
    started[i]->check_completion(job, round, error, kCompletionNames[static_cast<int>(how)]);
  }
  job.checker.check(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS,
                    where(job, round) + ": " + kCompletionNames[static_cast<int>(how)] + " returned " + std::to_string(rc));
  started.clear();
}

// --fresh-comms: frees each fresh communicator this rank has issued all the round's collectives
// on, every time it is asked with even odds, or surely with `surely`.
class FreshCommFrees {
 public:
  FreshCommFrees(const Job& job, const Round& round) : job_(job), round_(round) {
    for (const Op& op : round.ops) ++left_[op.comm];
  }
  void issued(const Op& op) { --left_[op.comm]; }
  void offer(Draw& mine, bool surely) {
    for (int k = 0; k < kCommKinds; ++k) {
      if (!job_.comms.fresh(k) || left_[k] > 0 || job_.comms.comm(k) == MPI_COMM_NULL) continue;
      if (!surely && !mine.coin()) continue;
      if (job_.trace) std::fprintf(stderr, "trace: %s: MPI_Comm_free %s\n", where(job_, round_).c_str(), kCommNames[k]);
      const int rc = job_.comms.free(k);
      job_.checker.check(rc == MPI_SUCCESS, where(job_, round_) + ": MPI_Comm_free of the " + kCommNames[k] +
                                                " returned " + std::to_string(rc));
    }
  }

 private:
  const Job& job_;
  const Round& round_;
  int left_[kCommKinds] = {};
};

void run_round(const Job& job, const Round& round) {
  // This rank's own choices: the interleaving of communicators, what it completes early, and how.
  Draw mine{std::mt19937_64(job.seed * 7919ULL + static_cast<std::uint64_t>(round.number) * 104729ULL +
                            static_cast<std::uint64_t>(job.world_rank) + 1)};
  job.comms.remake_freed(round.number);
  FreshCommFrees frees(job, round);
  frees.offer(mine, false);  // a communicator the round does not use
  std::vector<std::unique_ptr<Issued>> issued;
  std::vector<Issued*> outstanding;
  const auto issue = [&](const Op& op) {
    issued.push_back(std::make_unique<Issued>(job, op));
    const bool started = issued.back()->start(job, round);
    frees.issued(op);
    frees.offer(mine, false);
    return started;
  };
  std::size_t next = 0;
  while (next < round.ops.size()) {
    // The segment up to the next blocking collective, interleaved across communicators.
    std::vector<std::vector<const Op*>> queues(kCommKinds);
    std::size_t end = next;
    for (; end < round.ops.size() && round.ops[end].form != CallForm::blocking; ++end) {
      queues[static_cast<std::size_t>(round.ops[end].comm)].push_back(&round.ops[end]);
    }
    for (std::size_t left = end - next; left > 0; --left) {
      int pick = mine.below(static_cast<int>(left));
      std::size_t q = 0;
      for (;; ++q) {
        if (pick < static_cast<int>(queues[q].size())) break;
        pick -= static_cast<int>(queues[q].size());
      }
      const Op& op = *queues[q].front();
      queues[q].erase(queues[q].begin());
      if (issue(op)) outstanding.push_back(issued.back().get());
    }
    if (end == round.ops.size()) break;
    if (!outstanding.empty() && mine.below(3) == 0) {
      // Some of them completed before the fence, by this rank's choice.
      std::vector<Issued*> some, rest;
      for (Issued* o : outstanding) (mine.coin() ? some : rest).push_back(o);
      complete_all(job, round, some, mine.coin() ? Completion::waitall : Completion::wait_reversed);
      outstanding = rest;
    }
    if (job.comms.fresh_comms()) {
      const std::string failed = job.comms.make_and_free_at_fence(static_cast<int>(end));
      job.checker.check(failed.empty(), where(job, round) + ": at the fence before #" + std::to_string(end) + ": " +
                                            failed);
    }
    issue(round.ops[end]);
    next = end + 1;
  }
  auto last = static_cast<Completion>(mine.below(kCompletions));
  if (job.avoid_defects && last != Completion::waitall) last = Completion::wait_reversed;
  complete_all(job, round, outstanding, last);
  frees.offer(mine, true);
  for (auto& one : issued) one->finish(job, round);
}

void run_rounds(const Job& job, int first, int end) {
  for (int number = first; number < end; ++number) {
    run_round(job, draw_round(job.seed, number, job.world_size, job.comm_count, job.max_elements, job.host_only,
                              job.avoid_defects));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = std::max(1, std::atoi(option(argc, argv, "--threads", "1").c_str()));
  const int provided = init_for_threads(&argc, &argv, threads);
  const RoundRange range = round_range(argc, argv, "100", "20261129");
  const std::uint64_t seed = range.seed;
  const MPI_Count max_elements = std::atoll(option(argc, argv, "--max-elements", "16384").c_str());
  const int comm_count = std::clamp(std::atoi(option(argc, argv, "--comms", "4").c_str()), 1, kCommKinds);
  const std::string space_name = option(argc, argv, "--space", "host");
  const bool fresh_comms = flag(argc, argv, "--fresh-comms");
  const int rank = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (threads > 1 && provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIP: --threads needs MPI_THREAD_MULTIPLE (provided %d)\n", provided);
    } else if (space) {
      HostMemory host;
      // Every thread's communicators are made here, in thread order on every rank, before any
      // thread starts: their creation is collective over MPI_COMM_WORLD.
      std::vector<std::unique_ptr<Comms>> comms;
      for (int t = 0; t < threads; ++t) {
        comms.push_back(std::make_unique<Comms>(comm_count, threads > 1 ? duplicate_of_world() : MPI_COMM_WORLD, range.first,
                                                fresh_comms));
      }
      // Threads allocate device memory through caches of their own, freed once every thread has
      // stopped (memory_space.h, CachingSpace: a free while another thread's NCCL work waits for a
      // peer can hang, as cudaFree waits for the device).
      std::vector<std::unique_ptr<CachingSpace>> caches;
      for (int t = 0; t < threads && threads > 1; ++t) caches.push_back(std::make_unique<CachingSpace>(*space));
      std::vector<Checker> checkers(static_cast<std::size_t>(threads));
      std::vector<Job> jobs;
      for (int t = 0; t < threads; ++t) {
        const auto k = static_cast<std::size_t>(t);
        MemorySpace& device = threads > 1 ? static_cast<MemorySpace&>(*caches[k]) : *space;
        jobs.push_back(Job{checkers[k], device, host, *comms[k], comm_count, rank, size,
                           seed + static_cast<std::uint64_t>(t), max_elements, space_name == "host",
                           flag(argc, argv, "--avoid-mpich-defects"), std::getenv("MCRP_TEST_TRACE") != nullptr, threads > 1 ? t : -1});
      }
      run_threads(checkers, [&](int t) { run_rounds(jobs[static_cast<std::size_t>(t)], range.first, range.end); });
      comms.clear();
      std::string program = "test_coll_random --space " + space_name + " --seed " + std::to_string(seed);
      if (threads > 1) program += " --threads " + std::to_string(threads);
      if (fresh_comms) program += " --fresh-comms";
      exit_code = checkers[0].finish(MPI_COMM_WORLD, program.c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
