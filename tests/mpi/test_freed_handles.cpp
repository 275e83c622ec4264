// Handles freed while an operation that uses them is still pending. MPI lets a program free a
// datatype (MPI_Type_free), a user-defined op (MPI_Op_free) or a communicator (MPI_Comm_free) right
// after starting a nonblocking operation, or after creating a persistent one, and requires the
// operation to complete normally: the object is only marked for deallocation and goes when its last
// use ends. The base MPI keeps references for its own requests; every request the library owns
// (staged, pipelined, NCCL, device-only point-to-point, persistent) must do the same.
//
// Each case starts the operation, frees every handle it can (and its arrays, as mpi4py does), then
// completes it (persistent ones are started twice after the frees, their output reset before each
// start) and checks the result against a reference. At the end the library must hold no handle:
// every free it put off has been done. Then MPI_Comm_disconnect, which MPI 4.1 lets a program call
// with inactive persistent requests and requests freed while active still on the communicator: the
// latter finish within it, the former can only be freed afterwards (the library only).
//   test_freed_handles --space fake-device
#include <dlfcn.h>
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/case_filter.h"
#include "tests/mpi/check.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/cuda_aware_base.h"
#include "tests/mpi/dropped_arrays.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

int value(int rank, long i) { return (rank + 1) * 100 + static_cast<int>(i % 89); }

// A pair of ints: a derived datatype, so that freeing it is possible at all.
MPI_Datatype make_pair_type() {
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  return pair;
}

// A user-defined sum over pairs of ints (whatever datatype handle it is given: the pair is the only
// one it is used with).
void pair_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < 2 * *len; ++i) b[i] += a[i];
}

// One int and a hole of one int: a datatype the library must pack and unpack itself.
MPI_Datatype make_every_other_type() {
  MPI_Datatype one = MPI_DATATYPE_NULL, every_other = MPI_DATATYPE_NULL;
  MPI_Type_vector(1, 1, 2, MPI_INT, &one);
  MPI_Type_create_resized(one, 0, 2 * static_cast<MPI_Aint>(sizeof(int)), &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_free(&one);
  return every_other;
}

// The handles one case uses, created before its call and freed right after it starts.
struct Handles {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Datatype every_other = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;

  explicit Handles(MPI_Comm parent) {
    MPI_Comm_dup(parent, &comm);
    pair = make_pair_type();
    every_other = make_every_other_type();
    MPI_Op_create(pair_sum, 1, &op);
  }
  MPI_Datatype type(bool strided) const { return strided ? every_other : pair; }
  void free_all() {
    MPI_Type_free(&pair);
    MPI_Type_free(&every_other);
    MPI_Op_free(&op);
    MPI_Comm_free(&comm);
  }
};

struct Context {
  MemorySpace& space;
  Checker& checker;
  int rank;
  int size;
};

std::vector<int> inputs(int rank, long ints) {
  std::vector<int> v(static_cast<std::size_t>(ints));
  for (long i = 0; i < ints; ++i) v[static_cast<std::size_t>(i)] = value(rank, i);
  return v;
}

// One operation: its start (the nonblocking calls, or the persistent inits) given the handles,
// writing `requests` requests, the buffer it writes, what that buffer holds before each start, and
// the result expected there.
struct Operation {
  std::function<int(Handles&, MPI_Request*)> start;
  SpaceBuffer<int>* output = nullptr;
  std::vector<int> before;
  std::vector<int> expected;
  int requests = 1;
};

// Starts `op`, frees every handle, completes it (a persistent one twice, its output reset before
// each start, so that a start that delivers nothing shows), frees persistent requests, and checks
// the output.
void run_freed(Context& c, const std::string& what, bool persistent, const Operation& op) {
  Handles h(MPI_COMM_WORLD);
  std::vector<MPI_Request> requests(static_cast<std::size_t>(op.requests), MPI_REQUEST_NULL);
  op.output->upload(op.before);
  int rc = op.start(h, requests.data());
  h.free_all();
  for (int round = 0; rc == MPI_SUCCESS && round < (persistent ? 2 : 1); ++round) {
    if (persistent) {
      op.output->upload(op.before);
      rc = MPI_Startall(op.requests, requests.data());
    }
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(op.requests, requests.data(), MPI_STATUSES_IGNORE);
  }
  for (MPI_Request& request : requests) {
    if (!persistent || request == MPI_REQUEST_NULL) continue;
    const int freed = MPI_Request_free(&request);
    if (rc == MPI_SUCCESS) rc = freed;
  }
  const std::vector<int> got = op.output->download();
  c.checker.expect_equal(what, rc, got.data(), op.expected.data(), op.expected.size());
}

std::vector<int> blank(std::size_t ints) { return std::vector<int>(ints, -1); }

// What a strided receive leaves: every other int delivered, the holes between them still -1.
std::vector<int> holes_kept(std::vector<int> values) {
  for (std::size_t i = 1; i < values.size(); i += 2) values[i] = -1;
  return values;
}

std::vector<int> summed(const Context& c, long ints) {
  std::vector<int> sum(static_cast<std::size_t>(ints), 0);
  for (int r = 0; r < c.size; ++r)
    for (long i = 0; i < ints; ++i) sum[static_cast<std::size_t>(i)] += value(r, i);
  return sum;
}

// Every rank's inputs in rank order, rank r contributing pairs + extra * r pairs.
std::vector<int> gathered(const Context& c, long pairs, long extra) {
  std::vector<int> all;
  for (int r = 0; r < c.size; ++r) {
    const std::vector<int> block = inputs(r, 2 * (pairs + extra * r));
    all.insert(all.end(), block.begin(), block.end());
  }
  return all;
}

void allreduce_case(Context& c, long pairs, bool persistent, const std::string& what) {
  SpaceBuffer<int> send(c.space, inputs(c.rank, 2 * pairs));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(2 * pairs));
  const int n = static_cast<int>(pairs);
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               return persistent
                          ? MPI_Allreduce_init(send.data(), recv.data(), n, k.pair, k.op, k.comm, MPI_INFO_NULL, r)
                          : MPI_Iallreduce(send.data(), recv.data(), n, k.pair, k.op, k.comm, r);
             },
             &recv, blank(recv.size()), summed(c, 2 * pairs)});
}

// A predefined type and op: only the communicator can be freed. This is the call the NCCL path
// and the pipelined staged path take.
void allreduce_int_case(Context& c, long pairs, bool persistent, const std::string& what) {
  SpaceBuffer<int> send(c.space, inputs(c.rank, 2 * pairs));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(2 * pairs));
  const int n = static_cast<int>(2 * pairs);
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               return persistent ? MPI_Allreduce_init(send.data(), recv.data(), n, MPI_INT, MPI_SUM, k.comm, MPI_INFO_NULL, r)
                                 : MPI_Iallreduce(send.data(), recv.data(), n, MPI_INT, MPI_SUM, k.comm, r);
             },
             &recv, blank(recv.size()), summed(c, 2 * pairs)});
}

// `strided`: every other int, so the library packs and unpacks the buffers itself (a receiver's
// holes keep their -1).
void bcast(Context& c, long pairs, bool persistent, bool strided, const std::string& what) {
  const int root = c.size - 1;
  SpaceBuffer<int> buffer(c.space, static_cast<std::size_t>(2 * pairs));
  const int n = static_cast<int>(pairs);
  const std::vector<int> expected = c.rank == root || !strided ? inputs(root, 2 * pairs) : holes_kept(inputs(root, 2 * pairs));
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               const MPI_Datatype type = k.type(strided);
               return persistent ? MPI_Bcast_init(buffer.data(), n, type, root, k.comm, MPI_INFO_NULL, r)
                                 : MPI_Ibcast(buffer.data(), n, type, root, k.comm, r);
             },
             &buffer, c.rank == root ? inputs(root, 2 * pairs) : blank(buffer.size()), expected});
}
void bcast_case(Context& c, long pairs, bool persistent, const std::string& what) {
  bcast(c, pairs, persistent, false, what);
}
void strided_bcast_case(Context& c, long pairs, bool persistent, const std::string& what) {
  bcast(c, pairs, persistent, true, what);
}

// MPICH 4.0.2's persistent allgather is wrong, so the library owns that request on host buffers too.
void allgather(Context& c, long pairs, bool persistent, bool strided, const std::string& what) {
  SpaceBuffer<int> send(c.space, inputs(c.rank, 2 * pairs));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(2 * pairs * c.size));
  const int n = static_cast<int>(pairs);
  const std::vector<int> expected = strided ? holes_kept(gathered(c, pairs, 0)) : gathered(c, pairs, 0);
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               const MPI_Datatype type = k.type(strided);
               return persistent
                          ? MPI_Allgather_init(send.data(), n, type, recv.data(), n, type, k.comm, MPI_INFO_NULL, r)
                          : MPI_Iallgather(send.data(), n, type, recv.data(), n, type, k.comm, r);
             },
             &recv, blank(recv.size()), expected});
}
void allgather_case(Context& c, long pairs, bool persistent, const std::string& what) {
  allgather(c, pairs, persistent, false, what);
}
void strided_allgather_case(Context& c, long pairs, bool persistent, const std::string& what) {
  allgather(c, pairs, persistent, true, what);
}

// Rank r contributes pairs + r pairs; the counts and displacements arrays are freed too.
void allgatherv_case(Context& c, long pairs, bool persistent, const std::string& what) {
  const std::vector<int> expected = gathered(c, pairs, 1);
  SpaceBuffer<int> send(c.space, inputs(c.rank, 2 * (pairs + c.rank)));
  SpaceBuffer<int> recv(c.space, expected.size());
  const int mine = static_cast<int>(pairs + c.rank);
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               std::vector<int> counts, displs;
               for (int q = 0, at = 0; q < c.size; at += counts.back(), ++q) {
                 counts.push_back(static_cast<int>(pairs + q));
                 displs.push_back(at);
               }
               const int rc = persistent ? MPI_Allgatherv_init(send.data(), mine, k.pair, recv.data(), counts.data(),
                                                               displs.data(), k.pair, k.comm, MPI_INFO_NULL, r)
                                         : MPI_Iallgatherv(send.data(), mine, k.pair, recv.data(), counts.data(),
                                                           displs.data(), k.pair, k.comm, r);
               mcrp_test::drop_array(counts, mcrp_test::kDroppedCount);
               mcrp_test::drop_array(displs, mcrp_test::kDroppedCount);
               return rc;
             },
             &recv, blank(recv.size()), expected});
}

// MPI_Alltoallw takes one datatype per peer: each its own, all freed with the arrays.
void alltoallw_case(Context& c, long pairs, bool persistent, const std::string& what) {
  const long ints = 2 * pairs;
  std::vector<int> send_values, expected;
  for (int to = 0; to < c.size; ++to)
    for (long i = 0; i < ints; ++i) send_values.push_back(value(c.rank, to * ints + i));
  for (int from = 0; from < c.size; ++from)
    for (long i = 0; i < ints; ++i) expected.push_back(value(from, c.rank * ints + i));
  SpaceBuffer<int> send(c.space, send_values);
  SpaceBuffer<int> recv(c.space, expected.size());
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               const auto p = static_cast<std::size_t>(c.size);
               std::vector<int> counts(p, static_cast<int>(pairs)), displs(p);
               std::vector<MPI_Datatype> types(p);
               for (std::size_t q = 0; q < p; ++q) {
                 displs[q] = static_cast<int>(q * static_cast<std::size_t>(ints) * sizeof(int));
                 types[q] = make_pair_type();
               }
               const int rc =
                   persistent ? MPI_Alltoallw_init(send.data(), counts.data(), displs.data(), types.data(), recv.data(),
                                                   counts.data(), displs.data(), types.data(), k.comm, MPI_INFO_NULL, r)
                              : MPI_Ialltoallw(send.data(), counts.data(), displs.data(), types.data(), recv.data(),
                                               counts.data(), displs.data(), types.data(), k.comm, r);
               for (MPI_Datatype& t : types) MPI_Type_free(&t);
               mcrp_test::drop_array(counts, mcrp_test::kDroppedCount);
               mcrp_test::drop_array(displs, mcrp_test::kDroppedCount);
               mcrp_test::drop_array(types, MPI_DATATYPE_NULL);
               return rc;
             },
             &recv, blank(recv.size()), expected});
}

// A ring: each rank sends to the next and receives from the previous, nonblocking or persistent,
// the type and the communicator freed before completion. `strided`: the type is every other int
// (the holes between elements keep the receiver's -1), which the library packs and unpacks itself.
void ring(Context& c, long pairs, bool persistent, bool strided, const std::string& what) {
  const long ints = 2 * pairs;
  const int next = (c.rank + 1) % c.size, previous = (c.rank + c.size - 1) % c.size;
  SpaceBuffer<int> send(c.space, inputs(c.rank, ints));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(ints));
  const int n = static_cast<int>(pairs);
  run_freed(c, what, persistent,
            {[&](Handles& k, MPI_Request* r) {
               const MPI_Datatype type = k.type(strided);
               int rc = persistent ? MPI_Recv_init(recv.data(), n, type, previous, 5, k.comm, &r[0])
                                   : MPI_Irecv(recv.data(), n, type, previous, 5, k.comm, &r[0]);
               if (rc == MPI_SUCCESS)
                 rc = persistent ? MPI_Send_init(send.data(), n, type, next, 5, k.comm, &r[1])
                                 : MPI_Isend(send.data(), n, type, next, 5, k.comm, &r[1]);
               return rc;
             },
             &recv, blank(recv.size()), strided ? holes_kept(inputs(previous, ints)) : inputs(previous, ints),
             2});
}
void ring_case(Context& c, long pairs, bool persistent, const std::string& what) {
  ring(c, pairs, persistent, false, what);
}
void strided_ring_case(Context& c, long pairs, bool persistent, const std::string& what) {
  ring(c, pairs, persistent, true, what);
}

// A receive too small for its message, its communicator freed before the wait: the truncation is
// still reported. MPICH 4.0.2 raises a completion's error on MPI_COMM_WORLD's handler, not the
// communicator's, and the library may meet it in any call that makes progress: both handlers
// return errors for the whole case. The receive has room for one int at least: Intel MPI 2021.18
// reports no truncation when a receive of count 0 meets a longer message.
void truncated_case(Context& c, long pairs, bool, const std::string& what) {
  if (c.size < 2) return;
  const int next = (c.rank + 1) % c.size, previous = (c.rank + c.size - 1) % c.size;
  const long ints = pairs + 1;
  SpaceBuffer<int> send(c.space, inputs(c.rank, ints + 1));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(ints));
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Irecv(recv.data(), static_cast<int>(ints), MPI_INT, previous, 9, comm, &requests[0]);
  MPI_Isend(send.data(), static_cast<int>(ints + 1), MPI_INT, next, 9, comm, &requests[1]);
  MPI_Comm_free(&comm);
  const int rc = MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  c.checker.check(error_class == MPI_ERR_TRUNCATE, what + ": error class " + std::to_string(error_class));
}

// A persistent allgather of one int per rank on a duplicate of MPI_COMM_WORLD: a library request on
// every memory kind ("Base-MPI defects").
struct OneIntAllgather {
  SpaceBuffer<int> send;
  SpaceBuffer<int> recv;
  std::vector<int> expected;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int init_rc = MPI_SUCCESS;

  explicit OneIntAllgather(Context& c)
      : send(c.space, inputs(c.rank, 1)), recv(c.space, static_cast<std::size_t>(c.size)) {
    for (int r = 0; r < c.size; ++r) expected.push_back(value(r, 0));
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    init_rc = MPI_Allgather_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &request);
  }
  // Starts and completes one round into a blanked output, and checks it.
  void check_round(Checker& checker, const std::string& what) {
    recv.upload(blank(recv.size()));
    int rc = init_rc;
    if (rc == MPI_SUCCESS) rc = MPI_Start(&request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    const std::vector<int> got = recv.download();
    checker.expect_equal(what, rc, got.data(), expected.data(), expected.size());
  }
};

// The error class of `call`'s return, MPI_COMM_WORLD's handler returning errors meanwhile (the
// library raises errors on a communicator that is gone there, as MPICH does).
int error_class_returned(const std::function<int()>& call) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = call();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  return error_class;
}

// Erroneous, but must not crash the library: a held communicator freed a second time (through a
// copy of its handle, by `release_again`: MPI_Comm_free or MPI_Comm_disconnect) is reported as a
// freed communicator (MPI_ERR_COMM), and the request that holds it still works. The library only
// (with the base MPI alone, the second release is undefined).
void freed_twice_case(Context& c, int (*release_again)(MPI_Comm*), const std::string& what) {
  OneIntAllgather allgather(c);
  MPI_Comm copy = allgather.comm;
  MPI_Comm_free(&allgather.comm);
  c.checker.check(allgather.comm == MPI_COMM_NULL, what + ": the first free sets the handle to MPI_COMM_NULL");
  const int error_class = error_class_returned([&] { return release_again(&copy); });
  c.checker.check(error_class == MPI_ERR_COMM,
                  what + ": the second release fails with MPI_ERR_COMM, class " + std::to_string(error_class));
  allgather.check_round(c.checker, what + ": the request still works");
  MPI_Request_free(&allgather.request);
}

int g_deletes = 0;  // delete callbacks run for count_deletes' keyval
int count_deletes(MPI_Comm, int, void*, void*) {
  ++g_deletes;
  return MPI_SUCCESS;
}

// MPI 4.1 (12.10.4) lets inactive persistent requests remain on a communicator MPI_Comm_disconnect
// releases, to be freed afterwards. The library's request must then reach neither the communicator
// that is gone nor a new one given the same handle: MPI_Start fails with MPI_ERR_REQUEST,
// MPI_Request_free works, and the next communicator is freed at once (its attribute's delete
// callback runs within MPI_Comm_free). The library only: MPICH 4.0.2 alone never returns from such
// a disconnect while a persistent request of its own is on the communicator.
void disconnect_inactive_case(Context& c) {
  const std::string what = "disconnect with an inactive request";
  OneIntAllgather allgather(c);
  allgather.check_round(c.checker, what + ": its round before");
  const MPI_Comm disconnected = allgather.comm;
  const int rc = MPI_Comm_disconnect(&allgather.comm);
  c.checker.check(rc == MPI_SUCCESS && allgather.comm == MPI_COMM_NULL, what + ": returns");

  MPI_Comm next = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &next);
  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_deletes, &key, nullptr);
  MPI_Comm_set_attr(next, key, nullptr);
  const int error_class = error_class_returned([&] { return MPI_Start(&allgather.request); });
  c.checker.check(error_class == MPI_ERR_REQUEST,
                  what + ": MPI_Start then fails with MPI_ERR_REQUEST, class " + std::to_string(error_class));
  const int freed = MPI_Request_free(&allgather.request);
  c.checker.check(freed == MPI_SUCCESS && allgather.request == MPI_REQUEST_NULL,
                  what + ": MPI_Request_free then works");
  g_deletes = 0;
  const bool same_handle = next == disconnected;
  MPI_Comm_free(&next);
  c.checker.check(g_deletes == 1, what + ": the next communicator (" + (same_handle ? "same" : "another") +
                                      " handle) is freed at once");
  MPI_Comm_free_keyval(&key);
}

// A send freed while active is a decoupled activity MPI_Comm_disconnect waits for (MPI 4.1,
// 12.10.4). Each rank sends `pairs` pairs to the next and receives from the previous on a
// communicator it then disconnects, having freed the send request and the datatype: once the
// disconnect returns, the library holds nothing (the send's operation, which held the datatype,
// has finished), and the receive got its data.
void disconnect_freed_send_case(Context& c, long pairs, int (*held)()) {
  const int next = (c.rank + 1) % c.size, previous = (c.rank + c.size - 1) % c.size;
  SpaceBuffer<int> send(c.space, inputs(c.rank, 2 * pairs));
  SpaceBuffer<int> recv(c.space, static_cast<std::size_t>(2 * pairs));
  recv.upload(blank(recv.size()));
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Datatype pair = make_pair_type();
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const int n = static_cast<int>(pairs);
  int rc = MPI_Irecv(recv.data(), n, pair, previous, 7, comm, &requests[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Isend(send.data(), n, pair, next, 7, comm, &requests[1]);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) rc = MPI_Request_free(&requests[1]);
  MPI_Type_free(&pair);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_disconnect(&comm);
  const std::string what = "disconnect after a freed send, pairs=" + std::to_string(pairs);
  c.checker.check(held() == 0, what + ": the send has finished, " + std::to_string(held()) + " handle(s) held");
  const std::vector<int> got = recv.download();
  const std::vector<int> expected = inputs(previous, 2 * pairs);
  c.checker.expect_equal(what, rc, got.data(), expected.data(), expected.size());
}

// `pairs`: the count of elements of the case's datatype, each two ints wide (a pair, or an int and
// its hole).
struct Case {
  const char* name;
  void (*run)(Context&, long pairs, bool persistent, const std::string& what);
};
const Case kCases[] = {
    {"allreduce", allreduce_case},
    {"allreduce MPI_INT", allreduce_int_case},
    {"bcast", bcast_case},
    {"strided bcast", strided_bcast_case},
    {"allgather", allgather_case},
    {"strided allgather", strided_allgather_case},
    {"allgatherv", allgatherv_case},
    {"alltoallw", alltoallw_case},
    {"ring", ring_case},
    {"strided ring", strided_ring_case},
    {"truncated", truncated_case},
};

// Base-MPI defects (docs/base-mpi-defects.md): these cases run with the library only.
const char* base_defect(bool persistent, const std::string& name) {
  if (persistent && (name == "allgather" || name == "strided allgather")) {
    return "MPICH 4.0.2's MPI_Request_free of an MPI_Allgather_init request whose derived datatype was freed "
           "fails an assertion (1 and 2 ranks)";
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string space_name = mcrp_test::option(argc, argv, "--space", "host");
  auto space = mcrp_test::make_memory_space(space_name, MPI_COMM_WORLD);
  if (!space) {
    MPI_Finalize();
    return mcrp_test::kSkipExitCode;
  }
  Checker checker;
  mcrp_test::CaseFilter filter(checker, argc, argv);
  Context c{*space, checker, mcrp_test::rank_of(MPI_COMM_WORLD), mcrp_test::size_of(MPI_COMM_WORLD)};
  for (const bool persistent : {false, true}) {
    const std::string form = persistent ? "persistent" : "nonblocking";
    for (const long pairs : {0L, 1L, 7L, 4099L, 70000L}) {
      for (const Case& test : kCases) {
        if (persistent && test.run == truncated_case) continue;
        const char* defect = base_defect(persistent, test.name);
        const std::string name = form + " " + test.name + " pairs=" + std::to_string(pairs);
        if (!filter.run(name, defect)) continue;
        Checker::BeyondBase beyond(checker, defect != nullptr);
        test.run(c, pairs, persistent, name);
      }
    }
  }
  // The library (when loaded) holds nothing once every request is freed: each free it put off is done.
  using Count = int (*)();
  if (auto held = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, "mcrpmpi_held_handle_count"))) {
    Checker::BeyondBase beyond(checker, true);
    if (filter.run("freed twice", nullptr)) freed_twice_case(c, MPI_Comm_free, "freed twice");
    if (filter.run("freed, then disconnected", nullptr)) {
      freed_twice_case(c, MPI_Comm_disconnect, "freed, then disconnected");
    }
    if (filter.run("disconnect with an inactive request", nullptr)) disconnect_inactive_case(c);
    for (const long pairs : {1L, 4099L, 70000L}) {
      const std::string name = "disconnect after a freed send pairs=" + std::to_string(pairs);
      if (!filter.run(name, nullptr)) continue;
      // The library passes host sends to the base MPI untouched, and device ones to a CUDA-aware base.
      if ((space_name == "host" || mcrp_test::base_takes_device_buffers()) && pairs > 1) {
        checker.skip(name + ": MPICH 4.0.2's MPI_Comm_disconnect does not wait for a send freed while active "
                            "beyond its eager size, which then reads its buffer after the call has returned");
        continue;
      }
      disconnect_freed_send_case(c, pairs, held);
    }
    checker.check(held() == 0, "no handle still held at the end: " + std::to_string(held()));
  }
  const int rc = checker.finish(MPI_COMM_WORLD, ("test_freed_handles on " + space_name).c_str());
  MPI_Finalize();
  return rc;
}
