// MPI_Alltoallw and the neighborhood collectives on buffers in any memory space:
// every blocking, nonblocking and persistent form (persistent ones started twice; the arrays of
// both dropped once the call or the init has returned, tests/mpi/dropped_arrays.h), int and
// large-count, against references computed here, on three topologies of MPI_COMM_WORLD:
//   dist-graph  MPI_Dist_graph_create_adjacent: r sends to r+1 and r-2 (mod size), rank 0 also to
//               the last rank, each edge once, so in- and out-degrees differ (3 and 4 ranks) and
//               small sizes have self edges;
//   cart        a non-periodic 2-D MPI_Cart_create: border neighbors are MPI_PROC_NULL, whose
//               receive blocks MPI leaves untouched;
//   graph       MPI_Graph_create of a ring without repeated neighbors (none at all on one rank).
// MPI_Alltoallw runs on MPI_COMM_WORLD, also with MPI_IN_PLACE (its ignored send arguments NULL).
// Receive buffers start filled with kSentinel; blocks lie in reverse order with one-element gaps,
// and the w forms alternate MPI_INT with a strided int (an int and a hole), so a check of the whole
// buffer also proves that gaps and holes kept their bytes. Without the library on MPICH 4.0.2, the
// int forms of MPI_Neighbor_alltoallw on a topology whose degrees differ are skipped: that MPICH
// reads their counts by the wrong degree (tests/mpi/base_mpi_quirks.h; --run-base-defects runs
// them). Options:
//   --space S       host, fake-device, fake-device-legacy, device, device-legacy
//   --scale N       elements per block are 1-3 times N (default 1; 4096 for the larger messages)
//   --bad-input     also bad input on the space's buffers (MPI_ERRORS_RETURN): a few by hand, then
//                   a table of six mistakes in every form of every entry point, with guard bytes
//                   around every buffer; without the library the cases MPICH 4.0.2 crashes on are
//                   skipped (--only, --trace, --run-base-defects: tests/mpi/case_filter.h)
//   --mixed         odd ranks keep their buffers in host memory: ranks of one call differ in memory
//                   kinds, which the base MPI's matching must not notice
//   --verify        (with MCRPMPI_VERIFY=1) a mistake on the last rank only fails the call on every
//                   rank: a negative count, and on device memory a receive buffer one int short
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/mpi/base_mpi_quirks.h"
#include "tests/mpi/case_filter.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/dropped_arrays.h"
#include "tests/mpi/expect_error.h"
#include "tests/mpi/guarded_space.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_messages.h"
#include "tests/mpi/strided_int.h"

namespace {

using namespace mcrp_test;

enum class Kind { allgather, allgatherv, alltoall, alltoallv, alltoallw, world_alltoallw, world_in_place };
enum class Form { blocking, nonblocking, persistent };
enum class Counts { narrow, wide };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::allgather: return "Neighbor_allgather";
    case Kind::allgatherv: return "Neighbor_allgatherv";
    case Kind::alltoall: return "Neighbor_alltoall";
    case Kind::alltoallv: return "Neighbor_alltoallv";
    case Kind::alltoallw: return "Neighbor_alltoallw";
    case Kind::world_alltoallw: return "Alltoallw";
    case Kind::world_in_place: return "Alltoallw(MPI_IN_PLACE)";
  }
  return "?";
}
const char* form_name(Form form) {
  return form == Form::blocking ? "blocking" : form == Form::nonblocking ? "nonblocking" : "persistent";
}

// Every rank's neighbor lists in the topology's block order (MPI_PROC_NULL kept in its place), so a
// rank can tell what each of its receive blocks must hold.
struct Topology {
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<std::vector<int>> sources, destinations;  // [rank][block]
};

// Gathers each rank's lists with the base MPI (PMPI_: the references do not go through the library).
void share_lists(Topology& t, const std::vector<int>& sources, const std::vector<int>& destinations) {
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  for (auto [mine, all] : {std::pair{&sources, &t.sources}, std::pair{&destinations, &t.destinations}}) {
    int n = static_cast<int>(mine->size());
    std::vector<int> lengths(size);
    PMPI_Allgather(&n, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> displs(size, 0);
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + lengths[r - 1];
    std::vector<int> flat(displs[size - 1] + lengths[size - 1] + 1);
    PMPI_Allgatherv(mine->data(), n, MPI_INT, flat.data(), lengths.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
    all->resize(size);
    for (int r = 0; r < size; ++r) (*all)[r].assign(flat.begin() + displs[r], flat.begin() + displs[r] + lengths[r]);
  }
}

Topology dist_graph(int rank, int size) {
  // The same list on every rank, in one order, each edge once: how repeated edges between two
  // ranks pair up is not fixed by MPI (MPICH pairs them differently in different collectives).
  std::vector<std::pair<int, int>> edges;
  auto add = [&](int from, int to) {
    if (std::find(edges.begin(), edges.end(), std::pair{from, to}) == edges.end()) edges.emplace_back(from, to);
  };
  for (int r = 0; r < size; ++r) {
    add(r, (r + 1) % size);
    add(r, (r + size - (2 % size)) % size);
  }
  add(0, size - 1);
  std::vector<int> sources, destinations;
  for (auto [from, to] : edges) {
    if (from == rank) destinations.push_back(to);
    if (to == rank) sources.push_back(from);
  }
  Topology t;
  t.name = "dist-graph";
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &t.comm);
  share_lists(t, sources, destinations);
  return t;
}

// Some rank's in-degree differs from its out-degree.
bool degrees_differ(const Topology& t) {
  for (std::size_t r = 0; r < t.sources.size(); ++r) {
    if (t.sources[r].size() != t.destinations[r].size()) return true;
  }
  return false;
}

Topology cart(int size) {
  int dims[2] = {0, 0}, periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  Topology t;
  t.name = "cart";
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &t.comm);
  std::vector<int> neighbors;
  for (int d = 0; d < 2; ++d) {
    int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
    MPI_Cart_shift(t.comm, d, 1, &below, &above);
    neighbors.push_back(below);  // MPI's order: the negative direction first
    neighbors.push_back(above);
  }
  share_lists(t, neighbors, neighbors);
  return t;
}

Topology graph(int rank, int size) {
  std::vector<int> index, edges;  // a ring, each neighbor once, no self edges
  for (int r = 0; r < size; ++r) {
    for (int next : {(r + size - 1) % size, (r + 1) % size}) {
      if (next != r && std::find(edges.begin() + (index.empty() ? 0 : index.back()), edges.end(), next) == edges.end()) {
        edges.push_back(next);
      }
    }
    index.push_back(static_cast<int>(edges.size()));
  }
  Topology t;
  t.name = "graph";
  int no_edge = 0;  // MPICH refuses a NULL edges array even when there are none
  MPI_Graph_create(MPI_COMM_WORLD, size, index.data(), edges.empty() ? &no_edge : edges.data(), 0, &t.comm);
  std::vector<int> neighbors(edges.begin() + (rank == 0 ? 0 : index[rank - 1]), edges.begin() + index[rank]);
  share_lists(t, neighbors, neighbors);
  return t;
}

Topology world(int size) {
  Topology t;
  t.name = "world";
  t.comm = MPI_COMM_WORLD;
  std::vector<int> all(size);
  for (int r = 0; r < size; ++r) all[r] = r;
  t.sources.assign(size, all);
  t.destinations.assign(size, all);
  return t;
}

// One side of a call, block by block: counts, displacements (elements, or bytes for the w forms),
// datatypes, and the int positions in the buffer each block's elements occupy.
struct Plan {
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;
  std::vector<MPI_Datatype> types;
  std::vector<std::vector<std::size_t>> positions;
  std::size_t ints = 0;
};

// Blocks laid out from the last to the first, one int of gap after each; `typed` alternates MPI_INT
// and the strided int and gives byte displacements, `packed` puts uniform blocks back to back in
// order (the non-vector forms, whose layout MPI fixes).
Plan plan_of(const std::vector<MPI_Count>& counts, bool typed, bool packed) {
  Plan p;
  p.counts = counts;
  const std::size_t n = counts.size();
  p.displs.assign(n, 0);
  p.types.assign(n, MPI_INT);
  p.positions.resize(n);
  std::size_t next = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t b = packed ? k : n - 1 - k;
    const std::size_t stride = typed && b % 2 == 1 ? 2 : 1;
    if (stride == 2) p.types[b] = strided_int();
    p.displs[b] = static_cast<MPI_Aint>(typed ? next * sizeof(int) : next);
    for (MPI_Count e = 0; e < counts[b]; ++e) p.positions[b].push_back(next + static_cast<std::size_t>(e) * stride);
    next += static_cast<std::size_t>(counts[b]) * stride + (packed ? 0 : 1);
  }
  p.ints = next + 1;  // and one int past the end, never written
  return p;
}

// What arrives in receive block `i` of rank `r`: the index of the sender's send block that pairs
// with it (the j-th edge from s to r pairs with the j-th edge r lists from s), or -1 for none.
int paired_send_block(const Topology& t, int r, std::size_t i) {
  const int s = t.sources[r][i];
  if (s == MPI_PROC_NULL) return -1;
  const auto& mine = t.sources[r];
  const long j = std::count(mine.begin(), mine.begin() + static_cast<long>(i), s);
  long seen = 0;
  for (std::size_t p = 0; p < t.destinations[s].size(); ++p) {
    if (t.destinations[s][p] == r && seen++ == j) return static_cast<int>(p);
  }
  return -1;
}

// Elements that rank s puts in send block p (allgather kinds send one block to everyone).
MPI_Count send_count(Kind kind, int s, std::size_t p, MPI_Count scale) {
  switch (kind) {
    case Kind::allgather:
    case Kind::alltoall: return 2 * scale;
    case Kind::allgatherv: return (1 + s % 3) * scale;
    case Kind::world_in_place: return 0;  // unused: the receive side describes both
    default: return ((s + static_cast<MPI_Count>(p)) % 4 == 3 ? 0 : 1 + (s + static_cast<MPI_Count>(p)) % 3) * scale;
  }
}

bool gathers(Kind kind) { return kind == Kind::allgather || kind == Kind::allgatherv; }
bool typed(Kind kind) { return kind == Kind::alltoallw || kind == Kind::world_alltoallw || kind == Kind::world_in_place; }
bool packed(Kind kind) { return kind == Kind::allgather || kind == Kind::alltoall; }

int value_of(int src, int round, std::size_t block, MPI_Count e) {
  return value(src, round * 64 + static_cast<int>(block), e);
}

// In place, rank r's block j is what it sends to j and what it receives from j; the counts must be
// alike both ways, so they depend on the pair only.
MPI_Count in_place_count(int r, int j, MPI_Count scale) { return (1 + (r + j) % 3) * scale; }

struct Call {
  Kind kind;
  const Topology& topology;
  int rank;
  MPI_Count scale;
  Plan send, recv;
  // The int forms' arrays.
  std::vector<int> narrow_send_counts, narrow_recv_counts, narrow_send_displs, narrow_recv_displs;
  std::vector<int> expected;  // the whole receive buffer after the call
  // The datatypes of the forms with one per side, and NULL receive arrays (bad input only).
  MPI_Datatype sendtype = MPI_INT, recvtype = MPI_INT;
  bool null_recv_arrays = false;

  Call(Kind k, const Topology& t, int r, MPI_Count s, int round) : kind(k), topology(t), rank(r), scale(s) {
    const auto& sources = t.sources[r];
    const std::size_t sends = gathers(k) ? 1 : t.destinations[r].size();
    std::vector<MPI_Count> send_counts(sends), recv_counts(sources.size());
    for (std::size_t p = 0; p < sends; ++p) send_counts[p] = send_count(k, r, p, s);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const int block = paired_send_block(t, r, i);
      if (k == Kind::world_in_place) {
        recv_counts[i] = in_place_count(r, static_cast<int>(i), s);
      } else {
        // A block from nobody (MPI_PROC_NULL) still has its place: the uniform count where MPI fixes
        // the layout.
        const MPI_Count nobody = packed(k) ? send_count(k, r, 0, s) : s;
        recv_counts[i] = block < 0 ? nobody : send_count(k, sources[i], gathers(k) ? 0 : block, s);
      }
    }
    send = plan_of(send_counts, typed(k), packed(k));
    recv = plan_of(recv_counts, typed(k), packed(k));
    narrow_send_counts.assign(send.counts.begin(), send.counts.end());
    narrow_recv_counts.assign(recv.counts.begin(), recv.counts.end());
    narrow_send_displs.assign(send.displs.begin(), send.displs.end());
    narrow_recv_displs.assign(recv.displs.begin(), recv.displs.end());
    expected.assign(recv.ints, kSentinel);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const int block = paired_send_block(t, r, i);
      if (block < 0) continue;
      for (MPI_Count e = 0; e < recv.counts[i]; ++e) {
        expected[recv.positions[i][e]] = value_of(sources[i], round, gathers(k) ? 0 : block, e);
      }
    }
  }

  // Once a nonblocking call or a persistent init has taken the arrays (tests/mpi/dropped_arrays.h).
  void drop_arrays() {
    for (Plan* plan : {&send, &recv}) {
      drop_array<MPI_Count>(plan->counts, kDroppedCount);
      drop_array<MPI_Aint>(plan->displs, kDroppedCount);
      drop_array<MPI_Datatype>(plan->types, MPI_DATATYPE_NULL);
    }
    for (auto* narrow : {&narrow_send_counts, &narrow_recv_counts, &narrow_send_displs, &narrow_recv_displs}) {
      drop_array(*narrow, kDroppedCount);
    }
  }

  std::vector<int> send_contents(int round) const {
    const Plan& from = kind == Kind::world_in_place ? recv : send;
    std::vector<int> contents(from.ints, kSentinel);
    for (std::size_t b = 0; b < from.positions.size(); ++b) {
      for (std::size_t e = 0; e < from.positions[b].size(); ++e) contents[from.positions[b][e]] = value_of(rank, round, b, e);
    }
    return contents;
  }
};

// One entry point of `kind` in one form and count form. Persistent requests are made here and
// started by the caller; nonblocking ones are waited by the caller too.
int invoke(const Call& c, Form form, Counts counts, const void* sendbuf, void* recvbuf, MPI_Request* request) {
  const MPI_Comm comm = c.topology.comm;
  const MPI_Count sendcount = c.send.counts.empty() ? 0 : c.send.counts[0];
  const MPI_Count recvcount = c.recv.counts.empty() ? 0 : c.recv.counts[0];
  const bool in_place = c.kind == Kind::world_in_place;
  // Arrays as each form takes them; in place, the ignored send arrays are NULL.
  const int* sc = in_place ? nullptr : c.narrow_send_counts.data();
  const int* sd = in_place ? nullptr : c.narrow_send_displs.data();
  const MPI_Count* wsc = in_place ? nullptr : c.send.counts.data();
  const MPI_Aint* wsd = in_place ? nullptr : c.send.displs.data();
  const MPI_Datatype* st = in_place ? nullptr : c.send.types.data();
  const bool no_recv_arrays = c.null_recv_arrays;
  const int* rc = no_recv_arrays ? nullptr : c.narrow_recv_counts.data();
  const int* rd = no_recv_arrays ? nullptr : c.narrow_recv_displs.data();
  const MPI_Count* wrc = no_recv_arrays ? nullptr : c.recv.counts.data();
  const MPI_Aint* wrd = no_recv_arrays ? nullptr : c.recv.displs.data();
  const MPI_Datatype* rt = no_recv_arrays ? nullptr : c.recv.types.data();
  const MPI_Datatype stype = c.sendtype, rtype = c.recvtype;
  const int n = static_cast<int>(sendcount), m = static_cast<int>(recvcount);
  const bool wide = counts == Counts::wide;

#define MCRP_FORMS(NAME, INAME, NARROW_ARGS, WIDE_ARGS)                                                              \
  switch (form) {                                                                                            \
    case Form::blocking: return wide ? MPI_##NAME##_c WIDE_ARGS : MPI_##NAME NARROW_ARGS;                      \
    case Form::nonblocking:                                                                                  \
      return wide ? MPI_##INAME##_c(MCRP_EXPAND WIDE_ARGS, request) : MPI_##INAME(MCRP_EXPAND NARROW_ARGS, request); \
    case Form::persistent:                                                                                   \
      return wide ? MPI_##NAME##_init_c(MCRP_EXPAND WIDE_ARGS, MPI_INFO_NULL, request)                         \
                  : MPI_##NAME##_init(MCRP_EXPAND NARROW_ARGS, MPI_INFO_NULL, request);                        \
  }                                                                                                          \
  return MPI_ERR_INTERN;
#define MCRP_EXPAND(...) __VA_ARGS__

  switch (c.kind) {
    case Kind::allgather:
      MCRP_FORMS(Neighbor_allgather, Ineighbor_allgather, (sendbuf, n, stype, recvbuf, m, rtype, comm),
                 (sendbuf, sendcount, stype, recvbuf, recvcount, rtype, comm))
    case Kind::allgatherv:
      MCRP_FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, (sendbuf, n, stype, recvbuf, rc, rd, rtype, comm),
                 (sendbuf, sendcount, stype, recvbuf, wrc, wrd, rtype, comm))
    case Kind::alltoall:
      MCRP_FORMS(Neighbor_alltoall, Ineighbor_alltoall, (sendbuf, n, stype, recvbuf, m, rtype, comm),
                 (sendbuf, sendcount, stype, recvbuf, recvcount, rtype, comm))
    case Kind::alltoallv:
      MCRP_FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, (sendbuf, sc, sd, stype, recvbuf, rc, rd, rtype, comm),
                 (sendbuf, wsc, wsd, stype, recvbuf, wrc, wrd, rtype, comm))
    case Kind::alltoallw:
      MCRP_FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, (sendbuf, sc, wsd, st, recvbuf, rc, wrd, rt, comm),
                 (sendbuf, wsc, wsd, st, recvbuf, wrc, wrd, rt, comm))
    case Kind::world_alltoallw:
    case Kind::world_in_place:
      MCRP_FORMS(Alltoallw, Ialltoallw, (sendbuf, sc, sd, st, recvbuf, rc, rd, rt, comm),
                 (sendbuf, wsc, wsd, st, recvbuf, wrc, wrd, rt, comm))
  }
#undef MCRP_FORMS
#undef MCRP_EXPAND
  return MPI_ERR_INTERN;
}

struct Env {
  Checker& checker;
  MemorySpace& space;
  int rank;
  MPI_Count scale;
  const BaseMpiQuirks& quirks;
  CaseFilter& filter;  // which bad-input cases run, and base-MPI defects (tests/mpi/case_filter.h)
};

void run_case(const Env& e, Kind kind, const Topology& t, Form form, Counts counts) {
  // Where the base MPI reads the counts by the wrong degree, the case runs with the library only
  // (which calls the _c forms), as a check beyond the base MPI.
  const char* defect = e.quirks.narrow_neighbor_alltoallw_swaps_degrees && kind == Kind::alltoallw &&
                               counts == Counts::narrow && degrees_differ(t)
                           ? "MPICH 4.0.2's int forms of MPI_Neighbor_alltoallw read the counts by the wrong "
                             "degree where a rank's in- and out-degree differ"
                           : nullptr;
  if (e.filter.skips_base_defect(defect)) return;
  Checker::BeyondBase beyond(e.checker, defect != nullptr);
  const std::string what = std::string(kind_name(kind)) + (counts == Counts::wide ? "_c" : "") + " " +
                           form_name(form) + " on " + t.name + " scale " + std::to_string(e.scale);
  const bool in_place = kind == Kind::world_in_place;
  const int rounds = form == Form::persistent ? 2 : 1;
  Call first(kind, t, e.rank, e.scale, 0);
  SpaceBuffer<int> send(e.space, std::max<std::size_t>(first.send.ints, 1));
  SpaceBuffer<int> recv(e.space, first.recv.ints);
  MPI_Request request = MPI_REQUEST_NULL;
  for (int round = 0; round < rounds; ++round) {
    const Call call(kind, t, e.rank, e.scale, round);
    if (in_place) {
      recv.upload(call.send_contents(round));
    } else {
      send.upload(call.send_contents(round));
      recv.upload(std::vector<int>(call.recv.ints, kSentinel));
    }
    const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
    int rc = MPI_SUCCESS;
    // The arrays are alike every round: the first round's Call holds them for the call, which
    // must not need them once it has returned (a persistent request's starts included).
    if (round == 0 || form != Form::persistent) {
      rc = invoke(first, form, counts, sendbuf, recv.data(), &request);
      if (form != Form::blocking) first.drop_arrays();
    }
    if (rc == MPI_SUCCESS && form == Form::persistent) rc = MPI_Start(&request);
    if (rc == MPI_SUCCESS && form != Form::blocking) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    std::vector<int> got = recv.download();
    if (in_place) {
      // Blocks from nobody keep the rank's own data: what it sent, not the sentinel.
      std::vector<int> expected = call.expected;
      const std::vector<int> own = call.send_contents(round);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        if (expected[i] == kSentinel) expected[i] = own[i];
      }
      e.checker.expect_equal(what + " round " + std::to_string(round), rc, got.data(), expected.data(), got.size());
    } else {
      e.checker.expect_equal(what + " round " + std::to_string(round), rc, got.data(), call.expected.data(),
                             got.size());
    }
  }
  if (form == Form::persistent && request != MPI_REQUEST_NULL) MPI_Request_free(&request);
}

// What MPICH 4.0.2 crashes on, on host buffers too (found with --trace, no library; docs/base-mpi-defects.md
// "Base-MPI defects"): those cases run with the library only (case_filter.h).
constexpr const char* kInPlaceDefect = "MPICH 4.0.2 dereferences MPI_IN_PLACE in a neighborhood collective";
constexpr const char* kNullArraysDefect = "MPICH 4.0.2 dereferences NULL counts, displacements or datatypes arrays";

// Bad input on the space's buffers: an MPI error through MPI_ERRORS_RETURN, the receive buffer
// untouched.
void bad_input(const Env& e, const Topology& t) {
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_RETURN);
  const int degree = static_cast<int>(t.sources[e.rank].size());
  SpaceBuffer<int> send(e.space, std::vector<int>(64, 1)), recv(e.space, std::vector<int>(64, kSentinel));
  auto expect_class = [&](const char* what, int expected, const char* defect, const std::function<int()>& call) {
    expect_error_case(e.filter, e.checker, std::string(what) + " on " + t.name, expected, defect, call, recv,
                      kSentinel);
  };
  expect_class("Neighbor_alltoall negative count", MPI_ERR_COUNT, nullptr,
               [&] { return MPI_Neighbor_alltoall(send.data(), -1, MPI_INT, recv.data(), 1, MPI_INT, t.comm); });
  expect_class("Neighbor_allgather MPI_IN_PLACE", MPI_ERR_BUFFER, kInPlaceDefect, [&] {
    return MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, recv.data(), 1, MPI_INT, t.comm);
  });
  // What follows needs neighbors to describe (without any, the base MPI decides).
  if (degree > 0 && !t.destinations[e.rank].empty()) {
    expect_class("Neighbor_alltoallv NULL counts", MPI_ERR_ARG, kNullArraysDefect, [&] {
      return MPI_Neighbor_alltoallv(send.data(), nullptr, nullptr, MPI_INT, recv.data(), nullptr, nullptr, MPI_INT,
                                    t.comm);
    });
    expect_class("Ineighbor_alltoall MPI_DATATYPE_NULL", MPI_ERR_TYPE, nullptr, [&] {
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc =
          MPI_Ineighbor_alltoall(send.data(), 1, MPI_DATATYPE_NULL, recv.data(), 1, MPI_INT, t.comm, &request);
      e.checker.check(rc == MPI_SUCCESS || request == MPI_REQUEST_NULL, "a failed Ineighbor_alltoall leaves no request");
      if (rc == MPI_SUCCESS) MPI_Wait(&request, MPI_STATUS_IGNORE);
      return rc;
    });
  }
  // A NULL receive buffer with data to receive, and an uncommitted datatype.
  if (degree > 0) {
    std::vector<int> ones(static_cast<std::size_t>(degree), 1);
    std::vector<MPI_Aint> at(static_cast<std::size_t>(degree), 0);
    for (int i = 0; i < degree; ++i) at[i] = static_cast<MPI_Aint>(i * sizeof(int));
    std::vector<MPI_Datatype> ints(static_cast<std::size_t>(degree), MPI_INT);
    const int out = static_cast<int>(t.destinations[e.rank].size());
    std::vector<int> send_ones(static_cast<std::size_t>(out) + 1, 1);
    std::vector<MPI_Aint> send_at(static_cast<std::size_t>(out) + 1, 0);
    std::vector<MPI_Datatype> send_ints(static_cast<std::size_t>(out) + 1, MPI_INT);
    expect_class("Neighbor_alltoallw NULL receive buffer", MPI_ERR_BUFFER, nullptr, [&] {
      return MPI_Neighbor_alltoallw(send.data(), send_ones.data(), send_at.data(), send_ints.data(), nullptr,
                                    ones.data(), at.data(), ints.data(), t.comm);
    });
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(1, MPI_INT, &uncommitted);
    std::vector<MPI_Datatype> raw(static_cast<std::size_t>(degree), uncommitted);
    expect_class("Neighbor_alltoallw uncommitted datatype", MPI_ERR_TYPE, nullptr, [&] {
      return MPI_Neighbor_alltoallw(send.data(), send_ones.data(), send_at.data(), send_ints.data(), recv.data(),
                                    ones.data(), at.data(), raw.data(), t.comm);
    });
    MPI_Type_free(&uncommitted);
  }
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_ARE_FATAL);
}

// ---- bad input on every entry point of the list, one mistake at a time --------------------------

enum class Mistake { negative_count, null_datatype, uncommitted_datatype, null_recv_buffer, in_place, null_arrays };
constexpr Mistake kMistakes[] = {Mistake::negative_count,   Mistake::null_datatype, Mistake::uncommitted_datatype,
                                 Mistake::null_recv_buffer, Mistake::in_place,      Mistake::null_arrays};
const char* mistake_name(Mistake m) {
  switch (m) {
    case Mistake::negative_count: return "negative count";
    case Mistake::null_datatype: return "MPI_DATATYPE_NULL";
    case Mistake::uncommitted_datatype: return "uncommitted datatype";
    case Mistake::null_recv_buffer: return "NULL receive buffer";
    case Mistake::in_place: return "MPI_IN_PLACE";
    case Mistake::null_arrays: return "NULL receive arrays";
  }
  return "?";
}

// Makes `mistake` in receive block 0 of a correct call (every rank alike), with that block given an
// element so its datatype counts; returns the class MPI says, or -1 where the mistake does not
// apply to the kind.
int make_mistake(Mistake mistake, Call& c, const void** sendbuf, void** recvbuf, MPI_Datatype uncommitted) {
  const bool w = typed(c.kind);
  auto set_count = [&](MPI_Count n) {
    c.recv.counts[0] = n;
    c.narrow_recv_counts[0] = static_cast<int>(n);
  };
  if (c.recv.counts[0] == 0) set_count(1);
  switch (mistake) {
    case Mistake::negative_count:
      set_count(-1);
      return MPI_ERR_COUNT;
    case Mistake::null_datatype:
    case Mistake::uncommitted_datatype: {
      const MPI_Datatype bad = mistake == Mistake::null_datatype ? MPI_DATATYPE_NULL : uncommitted;
      (w ? c.recv.types[0] : c.recvtype) = bad;
      return MPI_ERR_TYPE;
    }
    case Mistake::null_recv_buffer:
      // At byte 0: with byte displacements a NULL buffer is MPI_BOTTOM, addresses being absolute.
      c.recv.displs[0] = 0;
      c.narrow_recv_displs[0] = 0;
      *recvbuf = nullptr;
      return MPI_ERR_BUFFER;
    case Mistake::in_place:
      if (c.kind == Kind::world_alltoallw) *recvbuf = MPI_IN_PLACE;
      else *sendbuf = MPI_IN_PLACE;
      return MPI_ERR_BUFFER;
    case Mistake::null_arrays:
      if (packed(c.kind)) return -1;
      c.null_recv_arrays = true;
      return MPI_ERR_ARG;
  }
  return -1;
}

const char* base_defect(Kind kind, Mistake mistake) {
  if (mistake == Mistake::in_place && kind != Kind::world_alltoallw) return kInPlaceDefect;
  return mistake == Mistake::null_arrays ? kNullArraysDefect : nullptr;
}

// Every mistake in every form of every kind on `t`: the class, no request left, the receive buffer
// and the guard bytes around every buffer untouched; then a correct call still works.
void mistakes(const Env& e, GuardedSpace& guarded, const Topology& t, const std::vector<Kind>& kinds) {
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_RETURN);
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(1, MPI_INT, &uncommitted);
  const Env on_guarded{e.checker, guarded, e.rank, e.scale, e.quirks, e.filter};
  for (Kind kind : kinds) {
    for (Mistake mistake : kMistakes) {
      for (Form form : {Form::blocking, Form::nonblocking, Form::persistent}) {
        for (Counts counts : {Counts::narrow, Counts::wide}) {
          Call call(kind, t, e.rank, e.scale, 0);
          SpaceBuffer<int> send(guarded, call.send_contents(0));
          SpaceBuffer<int> recv(guarded, std::vector<int>(call.recv.ints, kSentinel));
          const void* sendbuf = send.data();
          void* recvbuf = recv.data();
          const int expected = make_mistake(mistake, call, &sendbuf, &recvbuf, uncommitted);
          if (expected < 0) continue;
          const std::string name = std::string(kind_name(kind)) + (counts == Counts::wide ? "_c " : " ") +
                                   form_name(form) + " on " + t.name + ", " + mistake_name(mistake);
          const char* defect = base_defect(kind, mistake);
          if (!e.filter.run(name, defect)) continue;
          Checker::BeyondBase beyond(e.checker, defect != nullptr);
          MPI_Request request = MPI_REQUEST_NULL;
          const int rc = invoke(call, form, counts, sendbuf, recvbuf, &request);
          const int error_class = error_class_of(rc);
          const std::vector<int> after = recv.download();
          const bool untouched = std::all_of(after.begin(), after.end(), [](int v) { return v == kSentinel; });
          e.checker.check(error_class == expected && request == MPI_REQUEST_NULL && untouched && guarded.intact(),
                          name + ": class " + std::to_string(error_class) + " (expected " + std::to_string(expected) +
                              ")" +
                              (request == MPI_REQUEST_NULL ? "" : ", a request left") +
                              (untouched ? "" : ", receive buffer written") +
                              (guarded.intact() ? "" : ", guard bytes overwritten"));
          if (rc == MPI_SUCCESS && request != MPI_REQUEST_NULL) {  // a wrong success: let it finish
            if (form == Form::persistent) MPI_Start(&request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            if (form == Form::persistent) MPI_Request_free(&request);
          }
        }
      }
    }
    run_case(on_guarded, kind, t, Form::blocking, Counts::narrow);  // the communicator still works
  }
  MPI_Type_free(&uncommitted);
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_ARE_FATAL);
}

// With MCRPMPI_VERIFY=1: a mistake on the last rank only fails the call on every rank (with the
// class that rank found) instead of leaving the others waiting in the base MPI's collective: a
// negative count, and on device memory a receive buffer one int short (its allocation checked).
// Then the communicator still works.
void verify_agreement(const Env& e, const Topology& t, bool device) {
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_size(t.comm, &size);
  const bool last = e.rank == size - 1;
  const auto degree = static_cast<int>(t.sources[e.rank].size());
  const auto out = static_cast<int>(t.destinations[e.rank].size());
  constexpr int n = 2;  // ints per block
  SpaceBuffer<int> send(e.space, std::vector<int>(static_cast<std::size_t>(out * n) + 1, 1));
  auto expect_everywhere = [&](const std::string& what, int expected, std::size_t recv_ints, int count) {
    // SpaceBuffer allocates one element more than it holds: recv_ints + 1 in all.
    SpaceBuffer<int> recv(e.space, std::vector<int>(recv_ints, kSentinel));
    const int rc = MPI_Neighbor_alltoall(send.data(), n, MPI_INT, recv.data(), count, MPI_INT, t.comm);
    expect_error_class(e.checker, what + " on " + t.name + " (MCRPMPI_VERIFY)", rc, expected, recv, kSentinel);
  };
  const auto full = static_cast<std::size_t>(degree * n);
  expect_everywhere("the last rank's negative count", MPI_ERR_COUNT, full, last ? -1 : n);
  // Every rank must see the short buffer's rank have blocks: checked where the last rank has some.
  const bool last_receives = !t.sources[size - 1].empty();
  if (device && last_receives) {
    expect_everywhere("the last rank's receive buffer one int short", MPI_ERR_BUFFER,
                      last ? full - 2 : full, n);
  }
  MPI_Comm_set_errhandler(t.comm, MPI_ERRORS_ARE_FATAL);
  run_case(e, Kind::alltoall, t, Form::blocking, Counts::narrow);  // the communicator still works
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::unique_ptr<MemorySpace> space = space_option(argc, argv, "host");
  if (!space) {
    MPI_Finalize();
    return kSkipExitCode;
  }
  Checker checker;
  const MPI_Count scale = std::stoll(option(argc, argv, "--scale", "1"));
  HostMemory host;
  const bool host_here = flag(argc, argv, "--mixed") && rank % 2 == 1;
  const BaseMpiQuirks quirks = BaseMpiQuirks::detect();
  CaseFilter filter(checker, argc, argv);
  const Env e{checker, host_here ? static_cast<MemorySpace&>(host) : *space, rank, scale, quirks, filter};
  std::vector<Topology> topologies = {dist_graph(rank, size), cart(size), graph(rank, size)};
  const Topology everyone = world(size);
  for (const Topology& t : topologies) {
    for (Kind kind : {Kind::allgather, Kind::allgatherv, Kind::alltoall, Kind::alltoallv, Kind::alltoallw}) {
      for (Form form : {Form::blocking, Form::nonblocking, Form::persistent}) {
        for (Counts counts : {Counts::narrow, Counts::wide}) run_case(e, kind, t, form, counts);
      }
    }
  }
  for (Kind kind : {Kind::world_alltoallw, Kind::world_in_place}) {
    for (Form form : {Form::blocking, Form::nonblocking, Form::persistent}) {
      for (Counts counts : {Counts::narrow, Counts::wide}) run_case(e, kind, everyone, form, counts);
    }
  }
  if (flag(argc, argv, "--bad-input")) {
    for (const Topology& t : topologies) bad_input(e, t);
    // The table needs a receive block on every rank (the graph has none on one rank).
    GuardedSpace guarded(e.space);
    for (const Topology& t : topologies) {
      const bool everyone_receives =
          std::all_of(t.sources.begin(), t.sources.end(), [](const std::vector<int>& s) { return !s.empty(); });
      if (everyone_receives) {
        mistakes(e, guarded, t, {Kind::allgather, Kind::allgatherv, Kind::alltoall, Kind::alltoallv, Kind::alltoallw});
      }
    }
    mistakes(e, guarded, everyone, {Kind::world_alltoallw});
  }
  if (flag(argc, argv, "--verify")) {
    const std::string name = option(argc, argv, "--space", "host");
    for (const Topology& t : topologies) verify_agreement(e, t, name.find("device") != std::string::npos);
  }
  for (Topology& t : topologies) MPI_Comm_free(&t.comm);
  const int code = checker.finish(MPI_COMM_WORLD, "test_block_collectives");
  space.reset();
  MPI_Finalize();
  return code;
}
