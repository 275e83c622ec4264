// A program that uses MPI Sessions only (MPI 4.0: no MPI_Init, its communicator made from the
// "mpi://WORLD" process set) through the library. The library sets up its per-job state (the
// NCCL-everywhere map, the shared tuning table) in MPI_Init, so here device calls take the staged
// path on every rank alike (rule 1); they must still be right. Collectives (blocking and
// nonblocking, in place), point-to-point around a ring, on host or device memory, against computed
// references, on two sessions open at once; MPI 4.1's memory allocation kinds each session and
// its communicator report, one session having asked for some; and a receive freed while active,
// delivered by the last MPI_Session_finalize.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/alloc_kinds_info.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"

using namespace mcrp_test;

namespace {

constexpr int kCount = 1000;

class SessionsRun {
 public:
  SessionsRun(Checker& checker, MemorySpace& space, MPI_Comm comm, const std::string& round)
      : checker_(checker), space_(space), comm_(comm), round_(round) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  void run() {
    allreduce(false);
    allreduce(true);
    iallreduce();
    persistent_allreduce();
    bcast();
    strided_bcast();
    allgather();
    ring();
  }

 private:
  std::vector<float> mine() const {
    std::vector<float> values(kCount);
    for (int i = 0; i < kCount; ++i) values[i] = static_cast<float>(rank_ * 7 + i % 13);
    return values;
  }
  float sum_at(int i) const {
    float sum = 0;
    for (int r = 0; r < size_; ++r) sum += static_cast<float>(r * 7 + i % 13);
    return sum;
  }
  void check_sums(const std::vector<float>& got, const std::string& what) {
    bool right = got.size() == static_cast<std::size_t>(kCount);
    for (int i = 0; right && i < kCount; ++i) right = got[i] == sum_at(i);
    checker_.check(right, round_ + what + ": sums");
  }

  void allreduce(bool in_place) {
    SpaceBuffer<float> send(space_, mine());
    SpaceBuffer<float> recv(space_, in_place ? mine() : std::vector<float>(kCount, -1.0f));
    const int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm_);
    checker_.check(rc == MPI_SUCCESS, round_ + (in_place ? "MPI_Allreduce in place" : "MPI_Allreduce") + ": rc");
    check_sums(recv.download(), in_place ? "MPI_Allreduce in place" : "MPI_Allreduce");
  }

  void iallreduce() {
    SpaceBuffer<float> send(space_, mine());
    SpaceBuffer<float> recv(space_, std::vector<float>(kCount, -1.0f));
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm_, &request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    checker_.check(rc == MPI_SUCCESS, round_ + "MPI_Iallreduce + MPI_Wait: rc");
    check_sums(recv.download(), "MPI_Iallreduce");
  }

  void persistent_allreduce() {
    SpaceBuffer<float> send(space_, mine());
    SpaceBuffer<float> recv(space_, std::vector<float>(kCount, -1.0f));
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_Allreduce_init(send.data(), recv.data(), kCount, MPI_FLOAT, MPI_SUM, comm_, MPI_INFO_NULL, &request);
    for (int start = 0; rc == MPI_SUCCESS && start < 2; ++start) {
      rc = MPI_Start(&request);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    checker_.check(rc == MPI_SUCCESS, round_ + "MPI_Allreduce_init, started twice: rc");
    check_sums(recv.download(), "MPI_Allreduce_init");
    if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  }

  void bcast() {
    const int root = size_ - 1;
    std::vector<float> expected(kCount);
    for (int i = 0; i < kCount; ++i) expected[i] = static_cast<float>(root * 1000 + i);
    SpaceBuffer<float> buffer(space_, rank_ == root ? expected : std::vector<float>(kCount, -1.0f));
    const int rc = MPI_Bcast(buffer.data(), kCount, MPI_FLOAT, root, comm_);
    checker_.check(rc == MPI_SUCCESS && buffer.download() == expected, round_ + "MPI_Bcast from the last rank");
  }

  // A non-contiguous datatype, 2 MiB of data in 4 MiB: the staged path's pipeline (1 MiB chunks
  // by default) packs it, with a communicator of its own (there is no MPI_COMM_SELF here).
  void strided_bcast() {
    constexpr int kInts = 1 << 20;
    MPI_Datatype every_other = MPI_DATATYPE_NULL;
    MPI_Type_vector(kInts / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    std::vector<int> initial(kInts, -1), expected(kInts, -1);
    for (int i = 0; i < kInts; i += 2) expected[i] = 3 * i + 1;
    SpaceBuffer<int> buffer(space_, rank_ == 0 ? expected : initial);
    const int rc = MPI_Bcast(buffer.data(), 1, every_other, 0, comm_);
    checker_.check(rc == MPI_SUCCESS && buffer.download() == expected, round_ + "MPI_Bcast of a strided vector type");
    MPI_Type_free(&every_other);
  }

  void allgather() {
    std::vector<int> expected(static_cast<std::size_t>(size_) * 3);
    for (int r = 0; r < size_; ++r)
      for (int k = 0; k < 3; ++k) expected[r * 3 + k] = r * 10 + k;
    SpaceBuffer<int> send(space_, std::vector<int>{rank_ * 10, rank_ * 10 + 1, rank_ * 10 + 2});
    SpaceBuffer<int> recv(space_, std::vector<int>(expected.size(), -1));
    const int rc = MPI_Allgather(send.data(), 3, MPI_INT, recv.data(), 3, MPI_INT, comm_);
    checker_.check(rc == MPI_SUCCESS && recv.download() == expected, round_ + "MPI_Allgather");
  }

  // Each rank sends its values to the next and receives the previous one's: blocking Sendrecv,
  // then Isend/Irecv with a zero-byte message beside them.
  void ring() {
    const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
    std::vector<float> expected(kCount);
    for (int i = 0; i < kCount; ++i) expected[i] = static_cast<float>(previous * 7 + i % 13);
    SpaceBuffer<float> send(space_, mine());
    SpaceBuffer<float> recv(space_, std::vector<float>(kCount, -1.0f));
    MPI_Status status;
    int rc = MPI_Sendrecv(send.data(), kCount, MPI_FLOAT, next, 11, recv.data(), kCount, MPI_FLOAT, previous, 11,
                          comm_, &status);
    int received = -1;
    MPI_Get_count(&status, MPI_FLOAT, &received);
    checker_.check(rc == MPI_SUCCESS && recv.download() == expected && status.MPI_SOURCE == previous &&
                       received == kCount, round_ + "MPI_Sendrecv around the ring");

    SpaceBuffer<float> again(space_, std::vector<float>(kCount, -1.0f));
    MPI_Request requests[4];
    MPI_Irecv(again.data(), kCount, MPI_FLOAT, previous, 12, comm_, &requests[0]);
    MPI_Irecv(nullptr, 0, MPI_FLOAT, previous, 13, comm_, &requests[1]);
    MPI_Isend(send.data(), kCount, MPI_FLOAT, next, 12, comm_, &requests[2]);
    MPI_Isend(nullptr, 0, MPI_FLOAT, next, 13, comm_, &requests[3]);
    rc = MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    checker_.check(rc == MPI_SUCCESS && again.download() == expected, round_ + "MPI_Isend/MPI_Irecv around the ring");
  }

  Checker& checker_;
  MemorySpace& space_;
  MPI_Comm comm_;
  std::string round_;
  int rank_ = 0;
  int size_ = 1;
};

// A session and a communicator of every process made from it.
struct OpenSession {
  MPI_Session session = MPI_SESSION_NULL;
  MPI_Comm comm = MPI_COMM_NULL;

  // `alloc_kinds`: the mpi_memory_alloc_kinds the session asks for, or null.
  OpenSession(const char* tag, const char* alloc_kinds) {
    MPI_Info info = MPI_INFO_NULL;
    if (alloc_kinds != nullptr) {
      MPI_Info_create(&info);
      MPI_Info_set(info, "mpi_memory_alloc_kinds", alloc_kinds);
    }
    const int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &session);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return;
    MPI_Group world = MPI_GROUP_NULL;
    MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
    MPI_Comm_create_from_group(world, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&world);
  }
  ~OpenSession() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    if (session != MPI_SESSION_NULL) MPI_Session_finalize(&session);
  }
  OpenSession(const OpenSession&) = delete;
  OpenSession& operator=(const OpenSession&) = delete;
};

// What the second session asks for: kinds the library supports (one with two restrictors, in
// capitals: names compare without case), and kinds it does not (no ROCm; no restrictor "bogus").
constexpr const char* kRequestedKinds = "cuda:device, rocm:device,mpi:alloc_mem,CUDA:managed:host,cuda:bogus,system";
const char* const kSupportedRequested[] = {"cuda:device", "mpi:alloc_mem", "CUDA:managed:host"};
const char* const kUnsupportedRequested[] = {"rocm:device", "cuda:bogus"};

// MPI_Session_get_info lists "cuda" beside "mpi" and "system" once each, and of what the session
// asked for (`asked`), each supported kind as written and no other; the session's communicator lists
// "cuda" too.
void check_alloc_kinds(Checker& checker, const OpenSession& open, bool asked, const std::string& round) {
  MPI_Info info = MPI_INFO_NULL;
  std::vector<std::string> kinds;
  if (MPI_Session_get_info(open.session, &info) == MPI_SUCCESS) {
    kinds = listed_alloc_kinds(info);
    MPI_Info_free(&info);
  }
  const std::string where = round + "MPI_Session_get_info's mpi_memory_alloc_kinds " + shown(kinds);
  for (const char* kind : {"mpi", "system", "cuda"}) {
    checker.check(times_listed(kinds, kind) == 1, where + ": " + kind + " listed once");
  }
  for (const char* kind : kSupportedRequested) {
    checker.check(times_listed(kinds, kind) == (asked ? 1 : 0),
                  where + ": " + kind + (asked ? " listed once" : " not listed"));
  }
  for (const char* kind : kUnsupportedRequested) {
    checker.check(times_listed(kinds, kind) == 0, where + ": " + kind + " not listed");
  }
  const std::vector<std::string> comm_kinds = comm_alloc_kinds(open.comm);
  checker.check(times_listed(comm_kinds, "cuda") == 1,
                round + "the session's communicator lists cuda once: " + shown(comm_kinds));
}

// The checks on one session's communicator: the exit code of the checks, or the skip code.
int run_on(const OpenSession& open, const std::string& space_name, bool asked_kinds, const std::string& round) {
  if (open.comm == MPI_COMM_NULL) {
    std::fprintf(stderr, "test_sessions: %sno communicator from the session\n", round.c_str());
    return 1;
  }
  std::unique_ptr<MemorySpace> space = make_memory_space(space_name, open.comm);
  if (!space) return kSkipExitCode;
  Checker checker;
  check_alloc_kinds(checker, open, asked_kinds, round);
  SessionsRun(checker, *space, open.comm, round).run();
  return checker.finish(open.comm, ("test_sessions --space " + space_name + " (" + round + ")").c_str());
}

// A device receive from the left neighbour, freed while active (MPI_Request_free), on `open`'s
// communicator, whose data must be in place once the program's last session is finalized, as the
// library's MPI_Finalize does under the world model; checked after that, with no MPI left. The
// library moves the data from its staging block, which only its own progress does. Host receives
// are the base MPI's: MPICH 4.0.2's MPI_Session_finalize does not wait for one (a 3-rank run left
// one rank's buffer unwritten), so they are not checked.
class FreedReceive {
 public:
  FreedReceive(const OpenSession& open, const std::string& space_name) {
    if (open.comm == MPI_COMM_NULL || space_name == "host") return;
    space_ = make_memory_space(space_name, open.comm);
    if (!space_) return;
    int rank = 0, size = 1;
    MPI_Comm_rank(open.comm, &rank);
    MPI_Comm_size(open.comm, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int i = 0; i < kCount; ++i) expected_.push_back(left * 1000 + i);
    std::vector<int> mine(kCount);
    for (int i = 0; i < kCount; ++i) mine[i] = rank * 1000 + i;
    received_ = std::make_unique<SpaceBuffer<int>>(*space_, std::vector<int>(kCount, -1));
    SpaceBuffer<int> sent(*space_, mine);
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Irecv(received_->data(), kCount, MPI_INT, left, 11, open.comm, &request);
    MPI_Request_free(&request);
    MPI_Send(sent.data(), kCount, MPI_INT, right, 11, open.comm);
    MPI_Barrier(open.comm);  // every message sent before any session is finalized
  }
  // After the last MPI_Session_finalize: whether the data arrived (true when the case could not run).
  bool delivered(const std::string& space_name) const {
    if (!received_) return true;
    const bool right = received_->download() == expected_;
    std::printf("test_sessions --space %s: a receive freed while active %s delivered by the last "
                "MPI_Session_finalize\n", space_name.c_str(), right ? "was" : "was NOT");
    return right;
  }

 private:
  std::unique_ptr<MemorySpace> space_;
  std::unique_ptr<SpaceBuffer<int>> received_;
  std::vector<int> expected_;
};

}  // namespace

// Two sessions open at once (MPICH 4.0.2 crashes in a second MPI_Session_init after the first
// session's MPI_Session_finalize, with or without the library), each with its own communicator.
int main(int argc, char** argv) {
  const std::string space_name = option(argc, argv, "--space", "host");
  int first_code = 0, second_code = 0;
  std::unique_ptr<FreedReceive> freed;
  {
    OpenSession first("org.mcrpmpi.test_sessions.first", nullptr);
    OpenSession second("org.mcrpmpi.test_sessions.second", kRequestedKinds);
    first_code = run_on(first, space_name, false, "first session: ");
    second_code = run_on(second, space_name, true, "second session: ");
    freed = std::make_unique<FreedReceive>(second, space_name);
  }  // both sessions finalized: the second, then the first (the last)
  const int freed_code = freed->delivered(space_name) ? 0 : 1;
  freed.reset();  // its buffers outlive MPI: host memory, or the fake device's
  if (first_code != 0) return first_code;
  return second_code != 0 ? second_code : freed_code;
}
