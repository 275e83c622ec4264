// Issue 10: point-to-point traffic drawn at random, for the orders no hand-written case thinks of.
// Every rank draws the same plan from the seed and the round number: each rank sends zero to five
// messages to random peers (itself included) with random tags, sizes from 0 to --max-bytes, every
// send mode (standard, synchronous, buffered, ready) in blocking, nonblocking and persistent form,
// int or large-count; each receiver matches them by exact envelope, MPI_ANY_TAG, MPI_ANY_SOURCE
// or both, its receives posted in a shuffled order, then completed by Waitall, Waitany, Testsome,
// Testall or Wait in reverse. Half the rounds post every receive first (blocking sends are then
// safe); the other half post every send first (nonblocking, or buffered) and receive with
// blocking Recv, Probe or Iprobe then Recv, Mprobe or Improbe then Mrecv/Imrecv, or a posted
// Irecv. Some rounds are a random permutation exchanged by Sendrecv or Sendrecv_replace instead.
// Up to two collectives a round (allreduce or bcast, completed at once or left outstanding) fall
// among each rank's sends or receives, at a point of its own: the first such run found a rank
// polling MPI_Testsome over the base MPI's requests that never answered its peer (2026-11-28).
// Every call names one of several communicators (MPI_COMM_WORLD, a duplicate, one with the ranks
// reversed, and with --asserted-comm a duplicate asserting device-only point-to-point), so matching
// is per communicator and envelopes are translated; and each side lays its ints out by a datatype
// of its own (tests/mpi/int_layouts.h: gaps, units of two, blocks out of address order), receives
// naming whole units that the message may fill only partly.
//
// The expected match of each receive follows from MPI's rules alone: taking this rank's receives
// in posting order, each gets the earliest message not yet taken, from the source its status names
// (or its own source), that its tag accepts, in the sender's posting order (non-overtaking; every
// receive's class of matching messages holds as many messages as receives, so nothing is left over
// and no truncation occurs). Each message's elements name the message, so a message delivered to
// the wrong receive, out of order, partly, or beyond its length (sentinels) fails its check.
//   --space S / --send-space S / --recv-space S   memory spaces (tests/mpi/memory_spaces.h)
//   --rounds N (200)  --seed N (20261128)  --round R (only round R, to replay a failure)
//   --max-bytes N (262144)  --comms N (3: world, duplicate, reversed)  --int-only (every side MPI_INT)
//   --asserted-comm (adds the device-only duplicate; left out when a side is host memory)
//   --threads T (1): T threads a rank at MPI_THREAD_MULTIPLE, each running its own rounds (seed
//     + thread) on communicators of its own (its duplicate of MPI_COMM_WORLD in place of the world
//     itself), at once: the library's engines, progress and the helper thread under concurrent calls
// A failure names its round and seed; MCRP_TEST_TRACE=1 prints every call before it is made.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/bsend_space.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/int_layouts.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_entry_points.h"
#include "tests/mpi/p2p_messages.h"
#include "tests/mpi/random_rounds.h"

namespace {

using namespace mcrp_test;

constexpr int kTags = 3;
constexpr int kMaxSendsPerRank = 5;
constexpr int kGapFill = -5555;  // in a send buffer's gaps: never sent

// Element i of the message numbered `id` in its round: no two messages of a round agree on their
// first element, so a swapped delivery shows.
int payload(int id, MPI_Count i) { return static_cast<int>((id * 1000003LL + i * 7 + 11) % 2147483647LL); }

std::vector<int> payload_of(int id, MPI_Count n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = payload(id, i);
  return v;
}

struct Draw {
  std::mt19937_64 rng;
  // Uniform in [0, n): the same on every rank (the generator is fully specified; no distribution
  // object, whose algorithm the standard leaves open).
  int below(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool coin() { return below(2) == 1; }
  CountForm counts() { return coin() ? CountForm::large : CountForm::narrow; }
  // A message size in ints: a fifth empty, the rest log-uniform up to max_ints, so that small
  // (inline), medium and chunked payloads all occur.
  MPI_Count size(MPI_Count max_ints) {
    if (below(5) == 0 || max_ints == 0) return 0;
    int bits = 0;
    while ((MPI_Count{1} << (bits + 1)) <= max_ints) ++bits;
    const MPI_Count top = MPI_Count{1} << below(bits + 1);
    return std::min<MPI_Count>(max_ints, top + static_cast<MPI_Count>(rng() % static_cast<std::uint64_t>(top)));
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[static_cast<std::size_t>(below(static_cast<int>(i)))]);
    }
  }
  // MPI_INT a third of the time, any other layout otherwise.
  IntLayout layout(bool int_only) {
    const int k = below(kIntLayouts + 1);
    return int_only || k < 2 ? IntLayout::ints : static_cast<IntLayout>(k - 1);
  }
};

// What every rank draws its rounds from; the same on every rank.
struct PlanShape {
  int size;            // ranks
  MPI_Count max_ints;  // largest message
  int comms;           // communicators the calls are spread over
  bool int_only;       // every side MPI_INT
};

// The communicators of the run, each holding every rank, by index. The plan names ranks as in
// MPI_COMM_WORLD; each call translates them to its communicator's numbering.
class Comms {
 public:
  // The first `count` (1-3) of world, duplicate, reversed; `asserted` adds the device-only duplicate.
  // `world` is MPI_COMM_WORLD or a duplicate of it that this object owns (a thread's own); the
  // others are made from it, and rounds end with a barrier on it.
  Comms(int count, bool asserted, MPI_Comm world) : size_(size_of(world)) {
    add(world, "world", false);
    if (count >= 2) add(duplicate(world), "duplicate", false);
    if (count >= 3) {
      MPI_Comm reversed;
      MPI_Comm_split(world, 0, size_ - 1 - rank_of(world), &reversed);
      add(reversed, "reversed", true);
    }
    if (asserted) add(dup_asserting_device_only(world), "device-only duplicate", false);
  }
  ~Comms() {
    for (Entry& entry : entries_) {
      if (entry.comm != MPI_COMM_WORLD) MPI_Comm_free(&entry.comm);
    }
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;

  int count() const { return static_cast<int>(entries_.size()); }
  MPI_Comm comm(int k) const { return entries_[static_cast<std::size_t>(k)].comm; }
  const char* name(int k) const { return entries_[static_cast<std::size_t>(k)].name; }
  // A world rank's number in communicator k, and back (the mapping is its own inverse).
  int rank_in(int k, int world_rank) const {
    return entries_[static_cast<std::size_t>(k)].reversed ? size_ - 1 - world_rank : world_rank;
  }
  int world_rank(int k, int rank) const { return rank_in(k, rank); }

 private:
  struct Entry {
    MPI_Comm comm;
    const char* name;
    bool reversed;
  };
  static MPI_Comm duplicate(MPI_Comm comm) {
    MPI_Comm copy;
    MPI_Comm_dup(comm, &copy);
    return copy;
  }
  void add(MPI_Comm comm, const char* name, bool reversed) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    entries_.push_back({comm, name, reversed});
  }

  int size_;
  std::vector<Entry> entries_;
};

struct Send {
  int id;  // index in Round::sends
  int src;  // world ranks
  int dst;
  int comm;
  int tag;
  MPI_Count n;  // ints, a multiple of the layout's unit
  P2POp op;
  CallForm form;
  CountForm counts;
  IntLayout layout;
};

// How a receive is made (in a sends-first round all but `posted` receive at once).
enum class Way { posted, blocking, probe_then_recv, iprobe_then_recv, mprobe, improbe };
constexpr const char* kWayNames[] = {"posted", "Recv", "Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv", "Improbe+Imrecv"};

struct Receive {
  int source;  // world rank, or MPI_ANY_SOURCE
  int comm;
  int tag;     // or MPI_ANY_TAG
  MPI_Count capacity;  // the largest message its class holds, in ints (whole units are received)
  IntLayout layout;
  Way way;
  CallForm form;  // `posted`: nonblocking or persistent; Mprobe's Mrecv: either; Improbe's: nonblocking;
                  // the others: blocking
  CountForm counts;
};

// A collective among the point-to-point calls, each rank making it at a point of its own: an
// allreduce (MPI_INT, MPI_SUM, maybe in place) or a bcast, in any form completed at once, or left
// outstanding (MPI_Iallreduce, MPI_Ibcast) and completed with the round's requests. Its buffers
// are in the receive space.
struct Collective {
  int id;
  int comm;
  bool bcast;
  int root;  // world rank
  MPI_Count n;
  CallForm form;
  CountForm counts;
  bool outstanding;
  bool in_place;
};

enum class Completion { waitall, waitany, testsome, testall, wait_reversed };
constexpr const char* kCompletionNames[] = {"Waitall", "Waitany", "Testsome", "Testall", "Wait in reverse"};

struct Round {
  int number = 0;
  bool receives_first = false;
  bool ready_sends = false;  // a barrier after the receives are posted, so MPI_Rsend is allowed
  Completion completion = Completion::waitall;
  std::vector<Send> sends;  // every rank's, each rank's in its posting order
  std::vector<std::vector<Receive>> receives;  // per rank, in posting order
  std::vector<Collective> collectives;  // in the order every rank makes them
  // Per rank, per collective: the step it comes before (this rank's sends in a receives-first
  // round, its receives in a sends-first one; the number of steps: after the last).
  std::vector<std::vector<int>> collective_steps;
  // A permutation round instead: rank r sends to shift[r] by Sendrecv(_replace).
  std::vector<int> shift;
  int shift_comm = 0;
  bool replace = false;
  CountForm shift_counts = CountForm::narrow;
  std::vector<MPI_Count> shift_sizes;  // per sender, even (a whole number of units of any layout)
  std::vector<IntLayout> shift_layouts;  // per rank: its send (Sendrecv_replace: its one) datatype
  std::vector<IntLayout> shift_receive_layouts;  // per rank: Sendrecv's receive datatype
};

bool accepts(const Receive& r, const Send& s) {
  return r.comm == s.comm && (r.source == MPI_ANY_SOURCE || r.source == s.src) && (r.tag == MPI_ANY_TAG || r.tag == s.tag);
}

P2POp draw_send_op(Draw& d, bool receives_first, bool ready_sends) {
  const P2POp ops[] = {P2POp::Send, P2POp::Ssend, P2POp::Bsend, P2POp::Rsend};
  if (!receives_first) return d.below(3) == 0 ? P2POp::Bsend : (d.coin() ? P2POp::Send : P2POp::Ssend);
  return ops[d.below(ready_sends ? 4 : 3)];
}

// Blocking sends only where they cannot wait on a receive not yet posted: every receive is posted
// first, or the send is buffered.
CallForm draw_send_form(Draw& d, const Send& s, bool receives_first) {
  if (receives_first || s.op == P2POp::Bsend) return kCallForms[d.below(3)];
  return d.coin() ? CallForm::nonblocking : CallForm::persistent;
}

void draw_receives(Draw& d, Round& round, int me, bool int_only) {
  // One way of matching per receiver and round: each class of receives then has exactly its
  // messages (see the file comment).
  const int matching = d.below(4);  // exact, any tag, any source, any of both
  std::vector<Receive> mine;
  for (const Send& s : round.sends) {
    if (s.dst != me) continue;
    Receive r{(matching & 2) ? MPI_ANY_SOURCE : s.src, s.comm, (matching & 1) ? MPI_ANY_TAG : s.tag, 0,
              d.layout(int_only), Way::posted, CallForm::nonblocking, d.counts()};
    if (round.receives_first) {
      r.form = d.coin() ? CallForm::nonblocking : CallForm::persistent;
    } else {
      r.way = static_cast<Way>(d.below(6));
      // Improbe pairs with Imrecv; Mprobe with either Mrecv form.
      if (r.way == Way::posted) r.form = d.coin() ? CallForm::nonblocking : CallForm::persistent;
      else if (r.way == Way::improbe || (r.way == Way::mprobe && d.coin())) r.form = CallForm::nonblocking;
      else r.form = CallForm::blocking;
    }
    mine.push_back(r);
  }
  for (Receive& r : mine) {
    for (const Send& s : round.sends) {
      if (s.dst == me && accepts(r, s)) r.capacity = std::max(r.capacity, s.n);
    }
  }
  d.shuffle(mine);
  round.receives[static_cast<std::size_t>(me)] = std::move(mine);
}

// This rank's steps in the round, among which its collectives fall.
int steps_of(const Round& round, int me) {
  if (!round.receives_first) return static_cast<int>(round.receives[static_cast<std::size_t>(me)].size());
  return static_cast<int>(
      std::count_if(round.sends.begin(), round.sends.end(), [me](const Send& s) { return s.src == me; }));
}

// Drawn after everything else, so that a round's point-to-point plan does not depend on them.
void draw_collectives(Draw& d, Round& round, const PlanShape& shape) {
  const int size = shape.size;
  const int count = d.below(3);
  for (int k = 0; k < count; ++k) {
    Collective c{k, d.below(shape.comms), d.coin(), d.below(size), std::min<MPI_Count>(d.size(shape.max_ints), 4096),
                 kCallForms[d.below(3)], d.counts(), d.coin(), d.coin()};
    round.collectives.push_back(c);
  }
  for (int me = 0; me < size; ++me) {
    std::vector<int> at;
    for (int k = 0; k < count; ++k) at.push_back(d.below(steps_of(round, me) + 1));
    std::sort(at.begin(), at.end());
    round.collective_steps.push_back(at);
  }
}

Round draw_round(std::uint64_t seed, int number, const PlanShape& shape) {
  const int size = shape.size;
  const MPI_Count max_ints = shape.max_ints;
  Draw d{std::mt19937_64(seed * 1000003ULL + static_cast<std::uint64_t>(number))};
  Round round;
  round.number = number;
  if (d.below(5) == 0) {
    round.shift.resize(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) round.shift[static_cast<std::size_t>(r)] = r;
    d.shuffle(round.shift);
    round.shift_comm = d.below(shape.comms);
    round.replace = d.coin();
    round.shift_counts = d.counts();
    const auto even_size = [&] { return d.size(max_ints) / 2 * 2; };
    const MPI_Count common = even_size();  // Sendrecv_replace: one count on every rank
    for (int r = 0; r < size; ++r) {
      round.shift_sizes.push_back(round.replace ? common : even_size());
      round.shift_layouts.push_back(d.layout(shape.int_only));
      round.shift_receive_layouts.push_back(d.layout(shape.int_only));
    }
    return round;
  }
  round.receives_first = d.coin();
  round.ready_sends = round.receives_first && d.coin();
  round.completion = static_cast<Completion>(d.below(5));
  for (int src = 0; src < size; ++src) {
    const int count = d.below(kMaxSendsPerRank + 1);
    for (int k = 0; k < count; ++k) {
      Send s{static_cast<int>(round.sends.size()), src, d.below(size), d.below(shape.comms), d.below(kTags),
             d.size(max_ints), P2POp::Send, CallForm::blocking, d.counts(), d.layout(shape.int_only)};
      s.n -= s.n % unit_elements(s.layout);
      s.op = draw_send_op(d, round.receives_first, round.ready_sends);
      s.form = draw_send_form(d, s, round.receives_first);
      round.sends.push_back(s);
    }
  }
  round.receives.resize(static_cast<std::size_t>(size));
  for (int me = 0; me < size; ++me) draw_receives(d, round, me, shape.int_only);
  draw_collectives(d, round, shape);
  return round;
}

struct Job {
  Checker& checker;
  const SendReceiveSpaces& spaces;
  const Comms& comms;
  const IntLayoutTypes& types;
  int rank;
  int size;
  std::uint64_t seed;
  bool trace;
  int thread;  // -1 when the rank runs one thread
};

std::string where(const Job& job, const Round& round) {
  return "round " + std::to_string(round.number) + " (seed " + std::to_string(job.seed) + ") rank " +
         std::to_string(job.rank) + (job.thread >= 0 ? " thread " + std::to_string(job.thread) : std::string());
}

void trace_call(const Job& job, const Round& round, const std::string& what) {
  if (job.trace) std::fprintf(stderr, "trace: %s: %s\n", where(job, round).c_str(), what.c_str());
}

// Ranks in the messages are world ranks; " on <communicator>" names where the call is made.
std::string on(const Job& job, int comm) { return std::string(" on ") + job.comms.name(comm); }

std::string describe(const Job& job, const Send& s) {
  return std::string(p2p_op_name(s.op)) + " " + call_form_name(s.form) + " " + form_name(s.counts) + " #" +
         std::to_string(s.id) + " to " + std::to_string(s.dst) + on(job, s.comm) + " tag " + std::to_string(s.tag) +
         " n=" + std::to_string(s.n) + " as " + layout_name(s.layout);
}

std::string describe(const Job& job, const Receive& r, std::size_t k) {
  return std::string("receive ") + std::to_string(k) + " (" + kWayNames[static_cast<int>(r.way)] + " " +
         call_form_name(r.form) + " " + form_name(r.counts) + " source " + std::to_string(r.source) + on(job, r.comm) +
         " tag " + std::to_string(r.tag) + " capacity " + std::to_string(r.capacity) + " as " + layout_name(r.layout) +
         ")";
}

// The round's outstanding requests, completed together by the round's method.
class Outstanding {
 public:
  // Adds a started operation; `receive` is its index among this rank's receives, or -1.
  void add(const Started& started, int receive) {
    requests_.push_back(started.request);
    persistent_.push_back(started.persistent);
    receive_of_.push_back(receive);
  }

  // Completes every request; the statuses of receives land in receive_statuses.
  int complete(Completion how, std::vector<MPI_Status>& receive_statuses) {
    const int n = static_cast<int>(requests_.size());
    std::vector<MPI_Status> statuses(requests_.size());
    int rc = MPI_SUCCESS;
    switch (how) {
      case Completion::waitall: rc = MPI_Waitall(n, requests_.data(), statuses.data()); break;
      case Completion::waitany:
        for (;;) {
          int index = MPI_UNDEFINED;
          MPI_Status status;
          rc = MPI_Waitany(n, requests_.data(), &index, &status);
          if (rc != MPI_SUCCESS || index == MPI_UNDEFINED) break;
          statuses[static_cast<std::size_t>(index)] = status;
        }
        break;
      case Completion::testsome: {
        std::vector<int> indices(requests_.size());
        std::vector<MPI_Status> some(requests_.size());
        for (;;) {
          int done = 0;
          rc = MPI_Testsome(n, requests_.data(), &done, indices.data(), some.data());
          if (rc != MPI_SUCCESS || done == MPI_UNDEFINED) break;
          for (int i = 0; i < done; ++i) statuses[static_cast<std::size_t>(indices[i])] = some[i];
        }
        break;
      }
      case Completion::testall:
        for (int flag = 0; rc == MPI_SUCCESS && !flag;) rc = MPI_Testall(n, requests_.data(), &flag, statuses.data());
        break;
      case Completion::wait_reversed:
        for (int i = n - 1; i >= 0 && rc == MPI_SUCCESS; --i) rc = MPI_Wait(&requests_[i], &statuses[i]);
        break;
    }
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (receive_of_[i] >= 0) receive_statuses[static_cast<std::size_t>(receive_of_[i])] = statuses[i];
      if (persistent_[i] && requests_[i] != MPI_REQUEST_NULL) {
        const int freed = MPI_Request_free(&requests_[i]);
        if (rc == MPI_SUCCESS) rc = freed;
      }
    }
    return rc;
  }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<char> persistent_;
  std::vector<int> receive_of_;
};

// This rank's part of the round's collectives, each made at its step and checked at the end.
class Collectives {
 public:
  Collectives(const Job& job, const Round& round)
      : job_(job), round_(round), at_(round.collective_steps[static_cast<std::size_t>(job.rank)]) {}

  // Makes every collective due before this rank's step `step`.
  void before_step(int step, Outstanding& outstanding) {
    while (next_ < at_.size() && at_[next_] <= step) make(round_.collectives[next_++], outstanding);
  }

  void verify() const {
    for (std::size_t k = 0; k < results_.size(); ++k) {
      const Collective& c = round_.collectives[k];
      std::vector<int> expected(static_cast<std::size_t>(c.n) + 1, kSentinel);
      for (MPI_Count i = 0; i < c.n; ++i) {
        expected[static_cast<std::size_t>(i)] = c.bcast ? payload(kBcastIds + c.id, i) : sum_of_inputs(c.id, i);
      }
      const std::vector<int> got = results_[k]->download();
      job_.checker.expect_equal(where(job_, round_) + ": " + describe(c) + ": result", MPI_SUCCESS, got.data(),
                                expected.data(), expected.size());
    }
  }

 private:
  static constexpr int kBcastIds = 100000;  // bcast payloads apart from the messages'
  static int input(int rank, int id, MPI_Count i) { return (rank + 1) * static_cast<int>((id * 31 + i) % 97 + 1); }
  int sum_of_inputs(int id, MPI_Count i) const { return input(0, id, i) * job_.size * (job_.size + 1) / 2; }

  std::string describe(const Collective& c) const {
    std::string what = c.bcast ? "bcast from " + std::to_string(c.root) : std::string("allreduce");
    what += c.outstanding ? " left outstanding" : std::string(" ") + call_form_name(c.form);
    return what + on(job_, c.comm) + " " + form_name(c.counts) + (c.in_place && !c.bcast ? " in place" : "") +
           " n=" + std::to_string(c.n);
  }

  void make(const Collective& c, Outstanding& outstanding) {
    const std::string what = where(job_, round_) + ": " + describe(c);
    trace_call(job_, round_, describe(c));
    std::vector<int> values(static_cast<std::size_t>(c.n) + 1, kSentinel);
    for (MPI_Count i = 0; i < c.n; ++i) {
      if (!c.bcast) values[static_cast<std::size_t>(i)] = input(job_.rank, c.id, i);
      else if (job_.rank == c.root) values[static_cast<std::size_t>(i)] = payload(kBcastIds + c.id, i);
    }
    const bool in_place = c.in_place || c.bcast;
    results_.push_back(std::make_unique<SpaceBuffer<int>>(
        *job_.spaces.recv, in_place ? values : std::vector<int>(values.size(), kSentinel)));
    if (!in_place) inputs_.push_back(std::make_unique<SpaceBuffer<int>>(*job_.spaces.recv, values));
    void* result = results_.back()->data();
    const void* input = in_place ? MPI_IN_PLACE : inputs_.back()->data();
    const bool large = c.counts == CountForm::large;
    const MPI_Comm comm = job_.comms.comm(c.comm);
    const int root = job_.comms.rank_in(c.comm, c.root);
    int rc = MPI_SUCCESS;
    if (c.outstanding) {
      Started started;
      if (c.bcast) {
        rc = large ? MPI_Ibcast_c(result, c.n, MPI_INT, root, comm, &started.request)
                   : MPI_Ibcast(result, static_cast<int>(c.n), MPI_INT, root, comm, &started.request);
      } else {
        rc = large ? MPI_Iallreduce_c(input, result, c.n, MPI_INT, MPI_SUM, comm, &started.request)
                   : MPI_Iallreduce(input, result, static_cast<int>(c.n), MPI_INT, MPI_SUM, comm, &started.request);
      }
      if (rc == MPI_SUCCESS) outstanding.add(started, -1);
    } else {
      CollArgs args;
      args.sendbuf = input;
      args.recvbuf = result;
      args.count = c.n;
      args.datatype = MPI_INT;
      args.op = MPI_SUM;
      args.root = root;
      args.comm = comm;
      rc = invoke(c.bcast ? Coll::Bcast : Coll::Allreduce, c.form, c.counts, args, job_.size);
    }
    job_.checker.check(rc == MPI_SUCCESS, what + ": started (rc " + std::to_string(rc) + ")");
  }

  const Job& job_;
  const Round& round_;
  const std::vector<int>& at_;
  std::size_t next_ = 0;
  std::vector<std::unique_ptr<SpaceBuffer<int>>> inputs_;
  std::vector<std::unique_ptr<SpaceBuffer<int>>> results_;
};

// This rank's receive k, made at once (Recv, probes, Mprobe) or posted into `outstanding`.
void make_receive(const Job& job, const Round& round, std::size_t k, Receive& r,
                  std::vector<std::unique_ptr<SpaceBuffer<int>>>& buffers, std::vector<MPI_Status>& statuses,
                  Outstanding& outstanding) {
  const std::string what = where(job, round) + ": " + describe(job, r, k);
  trace_call(job, round, describe(job, r, k));
  const MPI_Comm comm = job.comms.comm(r.comm);
  // In the communicator's numbering from here on.
  int source = r.source == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : job.comms.rank_in(r.comm, r.source);
  int tag = r.tag;
  MPI_Message message = MPI_MESSAGE_NULL;
  if (r.way == Way::probe_then_recv || r.way == Way::iprobe_then_recv || r.way == Way::mprobe ||
      r.way == Way::improbe) {
    MPI_Status probed;
    int rc = MPI_SUCCESS;
    for (int found = 0; rc == MPI_SUCCESS && !found;) {
      switch (r.way) {
        case Way::probe_then_recv: rc = MPI_Probe(source, tag, comm, &probed), found = 1; break;
        case Way::iprobe_then_recv: rc = MPI_Iprobe(source, tag, comm, &found, &probed); break;
        case Way::mprobe: rc = MPI_Mprobe(source, tag, comm, &message, &probed), found = 1; break;
        default: rc = MPI_Improbe(source, tag, comm, &found, &message, &probed); break;
      }
    }
    MPI_Count count = -1;
    MPI_Get_count_c(&probed, MPI_INT, &count);
    job.checker.check(rc == MPI_SUCCESS && count >= 0 && count <= r.capacity,
                      what + ": probe (rc " + std::to_string(rc) + ", count " + std::to_string(count) + ")");
    if (rc != MPI_SUCCESS || count < 0 || count > r.capacity) return;
    // The receive then names the probed envelope and holds the message in as few units as can.
    source = probed.MPI_SOURCE;
    tag = probed.MPI_TAG;
    r.capacity = count;
  }
  const MPI_Count units = units_for(r.layout, r.capacity);
  buffers[k] = std::make_unique<SpaceBuffer<int>>(*job.spaces.recv, laid_out(r.layout, units, {}, kSentinel));
  P2PArgs args;
  args.recvbuf = buffers[k]->data();
  args.count = units;
  args.datatype = job.types.of(r.layout);
  args.source = source;
  args.tag = tag;
  args.comm = comm;
  args.message = &message;
  const bool matched = r.way == Way::mprobe || r.way == Way::improbe;
  const Started started = start_p2p(matched ? P2POp::Mrecv : P2POp::Recv, r.form, r.counts, args, &statuses[k]);
  job.checker.check(started.rc == MPI_SUCCESS, what + ": started (rc " + std::to_string(started.rc) + ")");
  if (started.rc == MPI_SUCCESS && r.form != CallForm::blocking) outstanding.add(started, static_cast<int>(k));
}

// Checks this rank's receives in posting order against the messages MPI's rules give them.
void verify_receives(const Job& job, const Round& round, const std::vector<Receive>& receives,
                     const std::vector<std::unique_ptr<SpaceBuffer<int>>>& buffers,
                     const std::vector<MPI_Status>& statuses) {
  std::vector<char> taken(round.sends.size(), 0);
  for (std::size_t k = 0; k < receives.size(); ++k) {
    const Receive& r = receives[k];
    const std::string what = where(job, round) + ": " + describe(job, r, k);
    if (!buffers[k]) continue;  // its probe failed, already counted
    const MPI_Status& status = statuses[k];
    const int status_source = job.comms.world_rank(r.comm, status.MPI_SOURCE);
    const int source = r.source == MPI_ANY_SOURCE ? status_source : r.source;
    const Send* due = nullptr;
    for (const Send& s : round.sends) {
      if (!taken[static_cast<std::size_t>(s.id)] && s.dst == job.rank && s.src == source && accepts(r, s)) {
        due = &s;
        break;
      }
    }
    if (due == nullptr) {
      job.checker.check(false, what + ": status names source " + std::to_string(status_source) +
                                   ", which has no message left for it");
      continue;
    }
    taken[static_cast<std::size_t>(due->id)] = 1;
    // Counts in the receive's datatype: the ints received, and whole units or MPI_UNDEFINED.
    const MPI_Datatype type = job.types.of(r.layout);
    const int unit = unit_elements(r.layout);
    const MPI_Count units = due->n % unit == 0 ? due->n / unit : MPI_UNDEFINED;
    MPI_Count count = -2, elements = -2;
    MPI_Get_count_c(&status, type, &count);
    MPI_Get_elements_c(&status, type, &elements);
    job.checker.check(status_source == due->src && status.MPI_TAG == due->tag && count == units &&
                          elements == due->n,
                      what + ": status (expected source " + std::to_string(due->src) + " tag " +
                          std::to_string(due->tag) + " count " + std::to_string(units) + " elements " +
                          std::to_string(due->n) + ", got " + std::to_string(status_source) + " " +
                          std::to_string(status.MPI_TAG) + " " + std::to_string(count) + " " +
                          std::to_string(elements) + ")");
    const std::vector<int> expected =
        laid_out(r.layout, units_for(r.layout, r.capacity), payload_of(due->id, due->n), kSentinel);
    const std::vector<int> got = buffers[k]->download();
    job.checker.expect_equal(what + ": data of " + describe(job, *due) + " from " + std::to_string(due->src),
                             MPI_SUCCESS, got.data(), expected.data(), expected.size());
  }
}

void run_exchange(const Job& job, const Round& round) {
  std::vector<Receive> receives = round.receives[static_cast<std::size_t>(job.rank)];
  std::vector<std::unique_ptr<SpaceBuffer<int>>> receive_buffers(receives.size());
  std::vector<MPI_Status> statuses(receives.size());
  std::vector<std::unique_ptr<SpaceBuffer<int>>> send_buffers;
  Outstanding outstanding;
  Collectives collectives(job, round);
  // The collectives fall among the receives of a sends-first round, among the sends otherwise.
  const auto make_receives = [&] {
    for (std::size_t k = 0; k < receives.size(); ++k) {
      if (!round.receives_first) collectives.before_step(static_cast<int>(k), outstanding);
      make_receive(job, round, k, receives[k], receive_buffers, statuses, outstanding);
    }
    if (!round.receives_first) collectives.before_step(static_cast<int>(receives.size()), outstanding);
  };
  const auto make_sends = [&] {
    int step = 0;
    for (const Send& s : round.sends) {
      if (s.src != job.rank) continue;
      if (round.receives_first) collectives.before_step(step++, outstanding);
      trace_call(job, round, describe(job, s));
      const MPI_Count units = s.n / unit_elements(s.layout);
      send_buffers.push_back(std::make_unique<SpaceBuffer<int>>(
          *job.spaces.send, laid_out(s.layout, units, payload_of(s.id, s.n), kGapFill)));
      P2PArgs args;
      args.sendbuf = send_buffers.back()->data();
      args.count = units;
      args.datatype = job.types.of(s.layout);
      args.dest = job.comms.rank_in(s.comm, s.dst);
      args.tag = s.tag;
      args.comm = job.comms.comm(s.comm);
      const Started started = start_p2p(s.op, s.form, s.counts, args, nullptr);
      job.checker.check(started.rc == MPI_SUCCESS, where(job, round) + ": " + describe(job, s) + ": started (rc " +
                                                       std::to_string(started.rc) + ")");
      if (started.rc == MPI_SUCCESS && s.form != CallForm::blocking) outstanding.add(started, -1);
    }
    if (round.receives_first) collectives.before_step(step, outstanding);
  };
  if (round.receives_first) {
    make_receives();
    if (round.ready_sends) MPI_Barrier(job.comms.comm(0));
    make_sends();
  } else {
    make_sends();
    make_receives();
  }
  trace_call(job, round, std::string("completing by ") + kCompletionNames[static_cast<int>(round.completion)]);
  const int rc = outstanding.complete(round.completion, statuses);
  job.checker.check(rc == MPI_SUCCESS, where(job, round) + ": completion by " +
                                           kCompletionNames[static_cast<int>(round.completion)] + " (rc " +
                                           std::to_string(rc) + ")");
  verify_receives(job, round, receives, receive_buffers, statuses);
  collectives.verify();
}

void run_shift(const Job& job, const Round& round) {
  const int to = round.shift[static_cast<std::size_t>(job.rank)];
  const int from = static_cast<int>(std::find(round.shift.begin(), round.shift.end(), job.rank) - round.shift.begin());
  const MPI_Count n_out = round.shift_sizes[static_cast<std::size_t>(job.rank)];
  const MPI_Count n_in = round.shift_sizes[static_cast<std::size_t>(from)];
  const int tag = round.number % kTags;
  // Sendrecv_replace sends and receives with one datatype; the sizes are even, whole units of any.
  const IntLayout send_layout = round.shift_layouts[static_cast<std::size_t>(job.rank)];
  const IntLayout receive_layout =
      round.replace ? send_layout : round.shift_receive_layouts[static_cast<std::size_t>(job.rank)];
  const std::string what = where(job, round) + ": " + (round.replace ? "Sendrecv_replace " : "Sendrecv ") +
                           form_name(round.shift_counts) + " to " + std::to_string(to) + " from " +
                           std::to_string(from) + on(job, round.shift_comm) + " n=" + std::to_string(n_out) + "/" +
                           std::to_string(n_in) + " as " + layout_name(send_layout) + "/" +
                           layout_name(receive_layout);
  trace_call(job, round, what);
  const MPI_Count send_units = n_out / unit_elements(send_layout);
  const MPI_Count receive_units = units_for(receive_layout, std::max(n_out, n_in));
  auto out = std::make_unique<SpaceBuffer<int>>(
      round.replace ? *job.spaces.recv : *job.spaces.send,
      laid_out(send_layout, send_units, payload_of(job.rank, n_out), round.replace ? kSentinel : kGapFill));
  auto in = std::make_unique<SpaceBuffer<int>>(*job.spaces.recv,
                                               laid_out(receive_layout, receive_units, {}, kSentinel));
  P2PArgs args;
  args.sendbuf = out->data();
  args.sendcount = send_units;
  args.sendtype = job.types.of(send_layout);
  args.dest = job.comms.rank_in(round.shift_comm, to);
  args.sendtag = tag;
  args.recvbuf = round.replace ? out->data() : in->data();
  args.recvcount = receive_units;
  args.recvtype = job.types.of(receive_layout);
  args.source = job.comms.rank_in(round.shift_comm, from);
  args.recvtag = tag;
  args.count = send_units;  // Sendrecv_replace: the one count and datatype
  args.datatype = job.types.of(send_layout);
  args.comm = job.comms.comm(round.shift_comm);
  MPI_Status status;
  const Started started = start_p2p(round.replace ? P2POp::Sendrecv_replace : P2POp::Sendrecv,
                                    CallForm::blocking, round.shift_counts, args, &status);
  MPI_Count count = -2, elements = -2;
  MPI_Get_count_c(&status, job.types.of(receive_layout), &count);
  MPI_Get_elements_c(&status, job.types.of(receive_layout), &elements);
  const int status_source = job.comms.world_rank(round.shift_comm, status.MPI_SOURCE);
  job.checker.check(started.rc == MPI_SUCCESS && status_source == from && status.MPI_TAG == tag &&
                        count == n_in / unit_elements(receive_layout) && elements == n_in,
                    what + ": status (rc " + std::to_string(started.rc) + ", source " + std::to_string(status_source) +
                        " tag " + std::to_string(status.MPI_TAG) + " count " + std::to_string(count) + " elements " +
                        std::to_string(elements) + ")");
  const std::vector<int> expected = laid_out(receive_layout, round.replace ? send_units : receive_units,
                                             payload_of(from, n_in), kSentinel);
  const std::vector<int> got = (round.replace ? out : in)->download();
  job.checker.expect_equal(what + ": data", started.rc, got.data(), expected.data(), expected.size());
}

// One thread's rounds, [first, end), on its communicators.
void run_rounds(const Job& job, const PlanShape& shape, int first, int end) {
  for (int number = first; number < end; ++number) {
    const Round round = draw_round(job.seed, number, shape);
    if (round.shift.empty()) run_exchange(job, round);
    else run_shift(job, round);
    // Every receive of this round is complete everywhere before the next round sends: its
    // wildcards cannot take the next round's messages.
    MPI_Barrier(job.comms.comm(0));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = std::max(1, std::atoi(option(argc, argv, "--threads", "1").c_str()));
  const int provided = init_for_threads(&argc, &argv, threads);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  const RoundRange range = round_range(argc, argv, "200", "20261128");
  const std::uint64_t seed = range.seed;
  const MPI_Count max_ints = std::atoll(option(argc, argv, "--max-bytes", "262144").c_str()) / 4;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int exit_code = kSkipExitCode;
  {
    const SendReceiveSpaces spaces = send_receive_spaces_from_arguments(argc, argv);
    if (threads > 1 && provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIP: --threads needs MPI_THREAD_MULTIPLE (provided %d)\n", provided);
    } else if (spaces.ready()) {
      // Room for every buffered send a rank makes in one round at the largest size, every thread.
      const BsendSpace bsend_space(max_ints * 4, kMaxSendsPerRank * threads);
      // The device-only duplicate only where both sides are device memory, as its assertion says.
      const bool host_side = spaces.send_name == "host" || spaces.recv_name == "host";
      const bool asserted = flag(argc, argv, "--asserted-comm") && !host_side;
      if (rank == 0 && asserted != flag(argc, argv, "--asserted-comm")) {
        std::printf("note: --asserted-comm left out: a side is host memory\n");
      }
      const int comm_count = std::clamp(std::atoi(option(argc, argv, "--comms", "3").c_str()), 1, 3);
      const IntLayoutTypes types;
      const PlanShape shape{size, max_ints, comm_count + (asserted ? 1 : 0), flag(argc, argv, "--int-only")};
      const bool trace = std::getenv("MCRP_TEST_TRACE") != nullptr;
      // Every thread's communicators are made here, in thread order on every rank, before any
      // thread starts: their creation is collective over MPI_COMM_WORLD.
      std::vector<std::unique_ptr<Comms>> comms;
      for (int t = 0; t < threads; ++t) {
        comms.push_back(
            std::make_unique<Comms>(comm_count, asserted, threads > 1 ? duplicate_of_world() : MPI_COMM_WORLD));
      }
      // Threads allocate through caches of their own, freed once every thread has stopped (see
      // CachingSpace: a free while another thread's NCCL work waits for a peer can hang).
      std::vector<SendReceiveSpaces> thread_spaces;
      for (int t = 0; t < threads && threads > 1; ++t) {
        thread_spaces.push_back(SendReceiveSpaces{spaces.send_name, spaces.recv_name,
                                                  std::make_unique<CachingSpace>(*spaces.send),
                                                  std::make_unique<CachingSpace>(*spaces.recv)});
      }
      std::vector<Checker> checkers(static_cast<std::size_t>(threads));
      std::vector<Job> jobs;
      for (int t = 0; t < threads; ++t) {
        const auto k = static_cast<std::size_t>(t);
        jobs.push_back(Job{checkers[k], threads > 1 ? thread_spaces[k] : spaces, *comms[k], types, rank, size,
                           seed + static_cast<std::uint64_t>(t), trace, threads > 1 ? t : -1});
      }
      run_threads(checkers, [&](int t) { run_rounds(jobs[static_cast<std::size_t>(t)], shape, range.first, range.end); });
      std::string program = "test_p2p_random --send-space " + spaces.send_name + " --recv-space " +
                            spaces.recv_name + " --seed " + std::to_string(seed);
      if (threads > 1) program += " --threads " + std::to_string(threads);
      exit_code = checkers[0].finish(MPI_COMM_WORLD, program.c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
