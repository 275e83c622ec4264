// The pipelined staged path (collectives/staged_pipeline.h) against references computed here:
// allreduce, reduce, bcast, reduce_scatter_block, reduce_scatter (uneven blocks) and allgather, blocking, nonblocking and persistent,
// at the chunk boundaries (count 0, one element, one under / at / one over one and three chunks,
// many chunks, more than the 1024-chunk cap), in place, at non-root ranks and at roots 0 and
// size-1; datatypes that differ between ranks (bcast of ints against a 12-byte type, so chunk
// boundaries cut through elements), non-contiguous receive types (packed, holes kept), a strided
// reduction (not pipelined), an uneven reduce_scatter with fewer elements than ranks, and pipelined
// requests completed in one array with host collectives and point-to-point, in reverse order.
//
// Run with MCRPMPI_STAGED_CHUNK_BYTES=<bytes> on every rank and `--chunk <bytes>` (the same value):
// sizes derive from it, and on device memory the test counts the chunks the library started
// (mcrpmpi_staged_pipeline_chunks) and requires exactly the number the rule of docs/collectives.md
// ("The staged path") gives.
//   test_staged_pipeline --space fake-device --chunk 64
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "collectives/kind.h"
#include "tests/mpi/check.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/cuda_aware_base.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::rank_of;
using mcrp_test::size_of;
using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

constexpr int kHole = -7;  // what the bytes between a non-contiguous type's elements must keep


// Rank r's i-th input element; sums over 4 ranks stay far from overflow.
int value(int rank, long i) { return (rank + 1) * 1000 + static_cast<int>(i % 997); }
std::vector<int> inputs(int rank, long n, long first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(rank, first + i);
  return v;
}
// Every rank's n inputs, in rank order: what an allgather delivers.
std::vector<int> gathered_inputs(int ranks, long n) {
  std::vector<int> all;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<int> block = inputs(r, n);
    all.insert(all.end(), block.begin(), block.end());
  }
  return all;
}
int sum_over_ranks(int ranks, long i) {
  int total = 0;
  for (int r = 0; r < ranks; ++r) total += value(r, i);
  return total;
}
// Elements first .. first+n-1 of the sum over ranks.
std::vector<int> summed_inputs(int ranks, long n, long first = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = sum_over_ranks(ranks, first + i);
  return v;
}

enum class Form { blocking, nonblocking, nonblocking_c, persistent };
constexpr Form kForms[] = {Form::blocking, Form::nonblocking, Form::nonblocking_c, Form::persistent};
const char* form_name(Form f) {
  switch (f) {
    case Form::blocking: return "blocking";
    case Form::nonblocking: return "I";
    case Form::nonblocking_c: return "I_c";
    case Form::persistent: return "init";
  }
  return "?";
}

// One collective in every form: the call for each, given the count type's width where it matters.
struct Calls {
  std::function<int()> blocking;
  std::function<int(MPI_Request*, bool large)> nonblocking;
  std::function<int(MPI_Request*)> init;
};

// Runs `calls` in `form`, resetting the buffers first and checking after each completion; a
// persistent request is started twice (buffers reset in between) and freed.
void run_form(Checker& checker, const std::string& what, Form form, const Calls& calls,
              const std::function<void()>& reset, const std::function<bool()>& verify) {
  const std::string name = what + " [" + form_name(form) + "]";
  reset();
  if (form == Form::blocking) {
    checker.check(calls.blocking() == MPI_SUCCESS && verify(), name);
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  if (form != Form::persistent) {
    int rc = calls.nonblocking(&request, form == Form::nonblocking_c);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    checker.check(rc == MPI_SUCCESS && verify(), name);
    return;
  }
  int rc = calls.init(&request);
  for (int round = 0; round < 2 && rc == MPI_SUCCESS; ++round) {
    reset();
    rc = MPI_Start(&request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    checker.check(rc == MPI_SUCCESS && verify(), name + " round " + std::to_string(round));
  }
  if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  if (rc != MPI_SUCCESS) checker.check(false, name + ": returned " + std::to_string(rc));
}

class Suite {
 public:
  Suite(Checker& checker, MemorySpace& space, MPI_Comm comm, long chunk_bytes)
      : checker_(checker), space_(space), comm_(comm), rank_(rank_of(comm)), size_(size_of(comm)),
        chunk_bytes_(chunk_bytes) {}

  // Element counts around the chunk boundaries of `element_bytes`-byte elements.
  std::vector<long> boundary_counts(long element_bytes) const {
    const long e = std::max(1L, chunk_bytes_ / element_bytes);
    return {0, 1, e - 1, e, e + 1, 3 * e - 1, 3 * e, 3 * e + 1, 37 * e + 5};
  }
  // More chunks than the library's cap of 1024: the chunk grows instead.
  long beyond_cap(long element_bytes) const { return 1100 * std::max(1L, chunk_bytes_ / element_bytes) + 3; }

  void run_all() {
    for (long n : boundary_counts(sizeof(int))) {
      for (Form form : kForms) {
        for (bool in_place : {false, true}) {
          allreduce(n, form, in_place);
          reduce_scatter_block(n, form, in_place);
          reduce_scatter(n, form, in_place);
          allgather(n, form, in_place);
          for (int root : roots()) reduce(n, form, root, in_place);
        }
        for (int root : roots()) bcast(n, form, root);
      }
    }
    const long many = beyond_cap(sizeof(int));
    for (Form form : {Form::blocking, Form::nonblocking}) {
      allreduce(many, form, false);
      reduce_scatter_block(many, form, true);
      reduce_scatter(many, form, false);
      allgather(many, form, false);
      bcast(many, form, size_ - 1);
    }
    for (long n : boundary_counts(sizeof(double))) allreduce_double(n);
    for (long n : boundary_counts(12)) bcast_mixed_types(n);
    for (long n : boundary_counts(sizeof(int))) {
      strided_bcast_and_allgather(n);
      strided_allreduce(n);
    }
    uneven_reduce_scatter();
    overlap_with_other_requests(3 * boundary_counts(sizeof(int))[3] + 1);
  }

  void check_chunk_counts() {
    using Counter = long long (*)();
    auto counter = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "mcrpmpi_staged_pipeline_chunks"));
    const bool staged = std::strcmp(space_.name(), "host") != 0;
    if (counter == nullptr || !staged) {
      checker_.skip("chunk counts: need libmcrpmpi and device memory");
      return;
    }
    if (mcrp_test::base_takes_device_buffers()) {
      checker_.skip("chunk counts: a CUDA-aware base MPI gets the device buffers, nothing is staged");
      return;
    }
    std::vector<long> counts = boundary_counts(sizeof(int));
    counts.push_back(beyond_cap(sizeof(int)));
    for (long n : counts) {
      const long long before = counter();
      allreduce(n, Form::blocking, false);
      const long long started = counter() - before;
      checker_.check(started == expected_chunks(n * static_cast<long>(sizeof(int)), sizeof(int)),
                     "chunks started by a " + std::to_string(n) + "-int allreduce: " + std::to_string(started));
    }
    check_forced_chunk(counter);
    check_own_chunk(counter);
  }

  // mcrpmpi-tune times the staged path at several chunks by forcing each on every rank between two
  // calls (mcrpmpi_force_staged_chunk_bytes): the next call is cut by it, unpipelined by 0, and by the
  // table's (MCRPMPI_STAGED_CHUNK_BYTES) again once released.
  void check_forced_chunk(long long (*counter)()) {
    using Force = int (*)(long long);
    auto force = reinterpret_cast<Force>(dlsym(RTLD_DEFAULT, "mcrpmpi_force_staged_chunk_bytes"));
    if (force == nullptr) {
      checker_.skip("forced chunk: the library has no mcrpmpi_force_staged_chunk_bytes");
      return;
    }
    const long n = 10 * std::max(1L, chunk_bytes_ / static_cast<long>(sizeof(int))) + 1;
    const long bytes = n * static_cast<long>(sizeof(int));
    for (long long setting : {4LL * chunk_bytes_, 0LL, -1LL}) {
      checker_.check(force(setting) == 0, "mcrpmpi_force_staged_chunk_bytes(" + std::to_string(setting) + ")");
      const long long before = counter();
      allreduce(n, Form::blocking, false);
      const long long started = counter() - before;
      const long in_force = setting < 0 ? chunk_bytes_ : static_cast<long>(setting);
      checker_.check(started == expected_chunks(bytes, sizeof(int), in_force),
                     "chunks started by a " + std::to_string(n) + "-int allreduce with the chunk forced to " +
                         std::to_string(setting) + ": " + std::to_string(started));
    }
  }

  // A collective's own chunk (mcrpmpi_force_own_staged_chunk_bytes; the suite gives each collective
  // the chunk it chose so) cuts that collective only, above the chunk forced for all.
  void check_own_chunk(long long (*counter)()) {
    using Force = int (*)(long long);
    using ForceOwn = int (*)(int, long long);
    auto force = reinterpret_cast<Force>(dlsym(RTLD_DEFAULT, "mcrpmpi_force_staged_chunk_bytes"));
    auto force_own = reinterpret_cast<ForceOwn>(dlsym(RTLD_DEFAULT, "mcrpmpi_force_own_staged_chunk_bytes"));
    if (force == nullptr || force_own == nullptr) {
      checker_.skip("own chunk: the library has no mcrpmpi_force_own_staged_chunk_bytes");
      return;
    }
    const int allreduce_kind = static_cast<int>(mcrp::CollKind::allreduce);
    const int bcast_kind = static_cast<int>(mcrp::CollKind::bcast);
    const long n = 10 * std::max(1L, chunk_bytes_ / static_cast<long>(sizeof(int))) + 1;
    const long bytes = n * static_cast<long>(sizeof(int));
    struct Step {
      const char* what;
      std::function<int()> set;
      long in_force;
    };
    const Step steps[] = {
        {"every collective's forced to 4 chunks, bcast's own 0",
         [&] { return force(4 * chunk_bytes_) | force_own(bcast_kind, 0); }, 4 * chunk_bytes_},
        {"the allreduce's own 2 chunks", [&] { return force_own(allreduce_kind, 2 * chunk_bytes_); }, 2 * chunk_bytes_},
        {"the allreduce's own 0", [&] { return force_own(allreduce_kind, 0); }, 0},
        {"the allreduce's own released", [&] { return force_own(allreduce_kind, -1); }, 4 * chunk_bytes_},
        {"all released", [&] { return force(-1) | force_own(bcast_kind, -1); }, chunk_bytes_},
    };
    for (const Step& step : steps) {
      checker_.check(step.set() == 0, std::string("forcing: ") + step.what);
      const long long before = counter();
      allreduce(n, Form::blocking, false);
      const long long started = counter() - before;
      checker_.check(
          started == expected_chunks(bytes, sizeof(int), step.in_force),
          "chunks started by a " + std::to_string(n) + "-int allreduce, " + step.what + ": " + std::to_string(started));
    }
    checker_.check(force_own(static_cast<int>(mcrp::CollKind::alltoall), 64) == -1,
                   "an own chunk for a collective whose staged path is not pipelined is refused");
  }

 private:
  std::vector<int> roots() const { return size_ > 1 ? std::vector<int>{0, size_ - 1} : std::vector<int>{0}; }

  // The rule of docs/collectives.md: chunks of max(setting / unit, ceil(units / 1024)) units, pipelined from two;
  // a setting of 0 turns pipelining off.
  long long expected_chunks(long bytes, long unit) const { return expected_chunks(bytes, unit, chunk_bytes_); }
  long long expected_chunks(long bytes, long unit, long setting) const {
    if (size_ < 2 || bytes == 0 || setting == 0) return 0;
    const long units = (bytes + unit - 1) / unit;
    const long per = std::max({1L, setting / unit, (units + 1023) / 1024});
    const long chunks = (units + per - 1) / per;
    return chunks >= 2 ? chunks : 0;
  }

  std::string label(const char* coll, long n, bool in_place, int root = -1) const {
    std::string s = std::string(coll) + " n=" + std::to_string(n) + (in_place ? " in place" : "");
    if (root >= 0) s += " root=" + std::to_string(root);
    return s + " on " + space_.name();
  }

  bool equal(const SpaceBuffer<int>& got, const std::vector<int>& expected) const {
    return got.download() == expected;
  }

  void allreduce(long n, Form form, bool in_place) {
    SpaceBuffer<int> send(space_, n), recv(space_, n);
    const std::vector<int> expected = summed_inputs(size_, n);
    const void* s = in_place ? MPI_IN_PLACE : send.data();
    Calls calls{[&] { return MPI_Allreduce(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Iallreduce_c(s, recv.data(), n, MPI_INT, MPI_SUM, comm_, q)
                               : MPI_Iallreduce(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Allreduce_init(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_, MPI_INFO_NULL, q);
                }};
    auto reset = [&] {
      (in_place ? recv : send).upload(inputs(rank_, n));
      if (!in_place) recv.upload(std::vector<int>(static_cast<std::size_t>(n), -1));
    };
    run_form(checker_, label("allreduce", n, in_place), form, calls, reset, [&] { return equal(recv, expected); });
  }

  void reduce(long n, Form form, int root, bool in_place) {
    const bool at_root = rank_ == root;
    const bool inplace_here = in_place && at_root;  // MPI_IN_PLACE is the root's only
    SpaceBuffer<int> send(space_, n), recv(space_, n);
    // Off the root recv is untouched.
    const std::vector<int> expected = at_root ? summed_inputs(size_, n) : std::vector<int>(static_cast<std::size_t>(n), -1);
    const void* s = inplace_here ? MPI_IN_PLACE : send.data();
    Calls calls{[&] { return MPI_Reduce(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, root, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Ireduce_c(s, recv.data(), n, MPI_INT, MPI_SUM, root, comm_, q)
                               : MPI_Ireduce(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, root, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Reduce_init(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, root, comm_,
                                         MPI_INFO_NULL, q);
                }};
    auto reset = [&] {
      recv.upload(std::vector<int>(static_cast<std::size_t>(n), -1));
      (inplace_here ? recv : send).upload(inputs(rank_, n));
    };
    run_form(checker_, label("reduce", n, in_place, root), form, calls, reset, [&] { return equal(recv, expected); });
  }

  void bcast(long n, Form form, int root) {
    SpaceBuffer<int> buffer(space_, n);
    const std::vector<int> expected = inputs(root, n);
    Calls calls{[&] { return MPI_Bcast(buffer.data(), static_cast<int>(n), MPI_INT, root, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Ibcast_c(buffer.data(), n, MPI_INT, root, comm_, q)
                               : MPI_Ibcast(buffer.data(), static_cast<int>(n), MPI_INT, root, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Bcast_init(buffer.data(), static_cast<int>(n), MPI_INT, root, comm_, MPI_INFO_NULL, q);
                }};
    auto reset = [&] { buffer.upload(rank_ == root ? expected : std::vector<int>(static_cast<std::size_t>(n), -1)); };
    run_form(checker_, label("bcast", n, false, root), form, calls, reset, [&] { return equal(buffer, expected); });
  }

  void reduce_scatter_block(long n, Form form, bool in_place) {
    const long total = n * size_;
    SpaceBuffer<int> send(space_, total), recv(space_, in_place ? total : n);
    const std::vector<int> expected = summed_inputs(size_, n, rank_ * n);
    const void* s = in_place ? MPI_IN_PLACE : send.data();
    Calls calls{[&] { return MPI_Reduce_scatter_block(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Ireduce_scatter_block_c(s, recv.data(), n, MPI_INT, MPI_SUM, comm_, q)
                               : MPI_Ireduce_scatter_block(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Reduce_scatter_block_init(s, recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_,
                                                       MPI_INFO_NULL, q);
                }};
    auto reset = [&] {
      if (in_place) {
        recv.upload(inputs(rank_, total));
      } else {
        send.upload(inputs(rank_, total));
        recv.upload(std::vector<int>(static_cast<std::size_t>(n), -1));
      }
    };
    // In place, the result is the first n elements; the rest of the buffer is unspecified.
    auto verify = [&] {
      std::vector<int> got = recv.download();
      got.resize(static_cast<std::size_t>(n));
      return got == expected;
    };
    run_form(checker_, label("reduce_scatter_block", n, in_place), form, calls, reset, verify);
  }

  // Uneven blocks: even ranks n + rank elements, odd ranks n / 3 (0 for small n), so blocks run out
  // at different chunks.
  void reduce_scatter(long n, Form form, bool in_place) {
    std::vector<int> counts(static_cast<std::size_t>(size_));
    std::vector<MPI_Count> wide(counts.size());
    long total = 0, mine_at = 0;
    for (int r = 0; r < size_; ++r) {
      counts[static_cast<std::size_t>(r)] = static_cast<int>(r % 2 == 0 ? n + r : n / 3);
      wide[static_cast<std::size_t>(r)] = counts[static_cast<std::size_t>(r)];
      if (r < rank_) mine_at += counts[static_cast<std::size_t>(r)];
      total += counts[static_cast<std::size_t>(r)];
    }
    const long mine = counts[static_cast<std::size_t>(rank_)];
    SpaceBuffer<int> send(space_, total), recv(space_, in_place ? total : mine);
    const std::vector<int> expected = summed_inputs(size_, mine, mine_at);
    const void* s = in_place ? MPI_IN_PLACE : send.data();
    Calls calls{[&] { return MPI_Reduce_scatter(s, recv.data(), counts.data(), MPI_INT, MPI_SUM, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Ireduce_scatter_c(s, recv.data(), wide.data(), MPI_INT, MPI_SUM, comm_, q)
                               : MPI_Ireduce_scatter(s, recv.data(), counts.data(), MPI_INT, MPI_SUM, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Reduce_scatter_init(s, recv.data(), counts.data(), MPI_INT, MPI_SUM, comm_, MPI_INFO_NULL, q);
                }};
    auto reset = [&] {
      (in_place ? recv : send).upload(inputs(rank_, total));
      if (!in_place) recv.upload(std::vector<int>(static_cast<std::size_t>(mine), -1));
    };
    auto verify = [&] {
      std::vector<int> got = recv.download();
      got.resize(static_cast<std::size_t>(mine));
      return got == expected;
    };
    run_form(checker_, label("reduce_scatter", n, in_place), form, calls, reset, verify);
  }

  void allgather(long n, Form form, bool in_place) {
    SpaceBuffer<int> send(space_, n), recv(space_, n * size_);
    const std::vector<int> expected = gathered_inputs(size_, n);
    const void* s = in_place ? MPI_IN_PLACE : send.data();
    const int sn = in_place ? 0 : static_cast<int>(n);
    const MPI_Datatype st = in_place ? MPI_DATATYPE_NULL : MPI_INT;
    Calls calls{[&] { return MPI_Allgather(s, sn, st, recv.data(), static_cast<int>(n), MPI_INT, comm_); },
                [&](MPI_Request* q, bool large) {
                  return large ? MPI_Iallgather_c(s, sn, st, recv.data(), n, MPI_INT, comm_, q)
                               : MPI_Iallgather(s, sn, st, recv.data(), static_cast<int>(n), MPI_INT, comm_, q);
                },
                [&](MPI_Request* q) {
                  return MPI_Allgather_init(s, sn, st, recv.data(), static_cast<int>(n), MPI_INT, comm_, MPI_INFO_NULL, q);
                }};
    auto reset = [&] {
      std::vector<int> initial(static_cast<std::size_t>(n * size_), -1);
      if (in_place) std::copy(expected.begin() + rank_ * n, expected.begin() + (rank_ + 1) * n, initial.begin() + rank_ * n);
      recv.upload(initial);
      send.upload(inputs(rank_, n));
    };
    run_form(checker_, label("allgather", n, in_place), form, calls, reset, [&] { return equal(recv, expected); });
  }

  // 8-byte elements: chunks hold half as many.
  void allreduce_double(long n) {
    SpaceBuffer<double> send(space_, n), recv(space_, n);
    std::vector<double> mine(static_cast<std::size_t>(n)), expected(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) {
      mine[static_cast<std::size_t>(i)] = value(rank_, i) + 0.5;
      expected[static_cast<std::size_t>(i)] = sum_over_ranks(size_, i) + 0.5 * size_;
    }
    send.upload(mine);
    const int rc = MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, comm_);
    checker_.check(rc == MPI_SUCCESS && recv.download() == expected, label("allreduce double", n, false));
  }

  // The root sends 3n ints, the others receive n elements of a 12-byte type: the signatures match,
  // the datatypes differ, and the 16-byte chunk unit cuts through 12-byte elements.
  void bcast_mixed_types(long n) {
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    SpaceBuffer<int> buffer(space_, 3 * n);
    const std::vector<int> expected = inputs(0, 3 * n);
    buffer.upload(rank_ == 0 ? expected : std::vector<int>(static_cast<std::size_t>(3 * n), -1));
    const int rc = rank_ == 0 ? MPI_Bcast(buffer.data(), static_cast<int>(3 * n), MPI_INT, 0, comm_)
                              : MPI_Bcast(buffer.data(), static_cast<int>(n), triple, 0, comm_);
    checker_.check(rc == MPI_SUCCESS && equal(buffer, expected), label("bcast int vs 12-byte type", n, false));
    MPI_Type_free(&triple);
  }

  // Odd ranks use a strided type (one int, then a hole of one int): packed into bytes on their side,
  // holes untouched; even ranks use plain ints. Bcast from the last rank and allgather.
  void strided_bcast_and_allgather(long n) {
    MPI_Datatype strided = strided_int();
    const bool odd = rank_ % 2 == 1;
    const int root = size_ - 1;
    SpaceBuffer<int> buffer(space_, 2 * n);
    std::vector<int> initial(static_cast<std::size_t>(2 * n), kHole);
    const std::vector<int> source = inputs(root, n);
    if (rank_ == root) for (long i = 0; i < n; ++i) initial[static_cast<std::size_t>(odd ? 2 * i : i)] = source[static_cast<std::size_t>(i)];
    buffer.upload(initial);
    int rc = MPI_Bcast(buffer.data(), static_cast<int>(n), odd ? strided : MPI_INT, root, comm_);
    checker_.check(rc == MPI_SUCCESS && buffer.download() == spread(source, odd, 2 * n),
                   label(odd ? "bcast strided" : "bcast against strided", n, false));

    SpaceBuffer<int> send(space_, n), recv(space_, 2 * n * size_);
    send.upload(inputs(rank_, n));
    recv.upload(std::vector<int>(static_cast<std::size_t>(2 * n * size_), kHole));
    rc = MPI_Allgather(send.data(), static_cast<int>(n), MPI_INT, recv.data(), static_cast<int>(n), odd ? strided : MPI_INT, comm_);
    checker_.check(rc == MPI_SUCCESS && recv.download() == spread(gathered_inputs(size_, n), odd, 2 * n * size_),
                   label(odd ? "allgather into strided" : "allgather against strided", n, false));

    // Odd ranks send from a strided buffer, then gather in place into one: the packed send side
    // (in place: this rank's block of the receive buffer).
    SpaceBuffer<int> strided_send(space_, 2 * n);
    strided_send.upload(spread(inputs(rank_, n), odd, 2 * n));
    SpaceBuffer<int> plain_recv(space_, n * size_);
    plain_recv.upload(std::vector<int>(static_cast<std::size_t>(n * size_), -1));
    rc = MPI_Allgather(strided_send.data(), static_cast<int>(n), odd ? strided : MPI_INT, plain_recv.data(),
                       static_cast<int>(n), MPI_INT, comm_);
    checker_.check(rc == MPI_SUCCESS && plain_recv.download() == gathered_inputs(size_, n),
                   label(odd ? "allgather from strided" : "allgather against strided sends", n, false));
    std::vector<int> mine_in_place(static_cast<std::size_t>(2 * n * size_), kHole);
    const std::vector<int> own = spread(inputs(rank_, n), odd, 2 * n);
    std::copy(own.begin(), own.end(), mine_in_place.begin() + (odd ? 2 * n * rank_ : n * rank_));
    recv.upload(mine_in_place);
    rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv.data(), static_cast<int>(n), odd ? strided : MPI_INT,
                       comm_);
    checker_.check(rc == MPI_SUCCESS && recv.download() == spread(gathered_inputs(size_, n), odd, 2 * n * size_),
                   label(odd ? "allgather in place into strided" : "allgather in place against strided", n, true));
    MPI_Type_free(&strided);
  }

  // A reduction on a strided type (with a user op: MPICH has MPI_SUM only for predefined types) is
  // not pipelined -- its datatype is the same on every rank, so all ranks agree -- and still right,
  // holes untouched.
  static void strided_sum(void* in, void* inout, int* len, MPI_Datatype*) {
    for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[2 * i] += static_cast<const int*>(in)[2 * i];
  }
  void strided_allreduce(long n) {
    MPI_Datatype strided = strided_int();
    MPI_Op sum;
    MPI_Op_create(strided_sum, 1, &sum);
    SpaceBuffer<int> send(space_, 2 * n), recv(space_, 2 * n);
    send.upload(spread(inputs(rank_, n), true, 2 * n));
    recv.upload(std::vector<int>(static_cast<std::size_t>(2 * n), kHole));
    const int rc = MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), strided, sum, comm_);
    checker_.check(rc == MPI_SUCCESS && recv.download() == spread(summed_inputs(size_, n), true, 2 * n),
                   label("allreduce strided", n, false));
    MPI_Op_free(&sum);
    MPI_Type_free(&strided);
  }

  // Fewer elements than ranks: counts 1, 0, 0, ... (an uneven reduce_scatter stays unpipelined).
  void uneven_reduce_scatter() {
    std::vector<int> counts(static_cast<std::size_t>(size_), 0);
    counts[0] = 1;
    SpaceBuffer<int> send(space_, 1), recv(space_, 1);
    send.upload(inputs(rank_, 1));
    recv.upload({-1});
    const int rc = MPI_Reduce_scatter(send.data(), recv.data(), counts.data(), MPI_INT, MPI_SUM, comm_);
    const int expected = rank_ == 0 ? sum_over_ranks(size_, 0) : -1;
    checker_.check(rc == MPI_SUCCESS && recv.download()[0] == expected, "reduce_scatter counts 1,0,.. on " + std::string(space_.name()));
  }

  // Pipelined requests in one array with a host bcast and a ring of host point-to-point, completed
  // by one Waitall in reverse order of issue, then by Waitany one at a time.
  void overlap_with_other_requests(long n) {
    for (bool any : {false, true}) {
      SpaceBuffer<int> a_send(space_, n), a_recv(space_, n), g_send(space_, n), g_recv(space_, n * size_);
      a_send.upload(inputs(rank_, n));
      g_send.upload(inputs(rank_, n));
      std::vector<int> host(static_cast<std::size_t>(n), rank_ == 0 ? 42 : 0);
      int token_out = rank_, token_in = -1;
      std::vector<MPI_Request> requests(5, MPI_REQUEST_NULL);
      MPI_Iallreduce(a_send.data(), a_recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, comm_, &requests[0]);
      MPI_Ibcast(host.data(), static_cast<int>(n), MPI_INT, 0, comm_, &requests[1]);
      MPI_Iallgather(g_send.data(), static_cast<int>(n), MPI_INT, g_recv.data(), static_cast<int>(n), MPI_INT, comm_,
                     &requests[2]);
      MPI_Irecv(&token_in, 1, MPI_INT, (rank_ + size_ - 1) % size_, 9, comm_, &requests[3]);
      MPI_Isend(&token_out, 1, MPI_INT, (rank_ + 1) % size_, 9, comm_, &requests[4]);
      std::reverse(requests.begin(), requests.end());
      int rc = MPI_SUCCESS;
      if (any) {
        for (std::size_t left = requests.size(); left > 0 && rc == MPI_SUCCESS; --left) {
          int index = MPI_UNDEFINED;
          rc = MPI_Waitany(static_cast<int>(requests.size()), requests.data(), &index, MPI_STATUS_IGNORE);
        }
      } else {
        rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      }
      const bool ok = rc == MPI_SUCCESS && a_recv.download() == summed_inputs(size_, n) && g_recv.download() == gathered_inputs(size_, n) &&
                      std::all_of(host.begin(), host.end(), [](int v) { return v == 42; }) &&
                      token_in == (rank_ + size_ - 1) % size_;
      checker_.check(ok, label(any ? "overlap, Waitany" : "overlap, Waitall reversed", n, false));
    }
  }

  static MPI_Datatype strided_int() {
    MPI_Datatype vector, resized;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vector);
    MPI_Type_create_resized(vector, 0, 2 * static_cast<MPI_Aint>(sizeof(int)), &resized);
    MPI_Type_commit(&resized);
    MPI_Type_free(&vector);
    return resized;
  }

  // `values` at every other int of `length` ints (holes kHole) when `strided`, else packed at the
  // front with kHole after them.
  static std::vector<int> spread(const std::vector<int>& values, bool strided, long length) {
    std::vector<int> out(static_cast<std::size_t>(length), kHole);
    for (std::size_t i = 0; i < values.size(); ++i) out[strided ? 2 * i : i] = values[i];
    return out;
  }

  Checker& checker_;
  MemorySpace& space_;
  MPI_Comm comm_;
  int rank_;
  int size_;
  long chunk_bytes_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string space_name = "host";
  long chunk_bytes = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--space") == 0) space_name = argv[i + 1];
    if (std::strcmp(argv[i], "--chunk") == 0) chunk_bytes = std::atol(argv[i + 1]);
  }
  int exit_code = mcrp_test::kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = mcrp_test::make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      Checker checker;
      Suite suite(checker, *space, MPI_COMM_WORLD, chunk_bytes);
      suite.run_all();
      suite.check_chunk_counts();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_staged_pipeline --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
