// Partitioned point-to-point (MPI 4.0) in a memory space: MPI_Psend_init and MPI_Precv_init around a
// ring (one rank: to itself), 1, 3 and 8 partitions of 0, 1, 1000 and 4099 elements of MPI_INT and of
// an int followed by a hole (tests/mpi/strided_int.h), each request started three times with new
// data. Partitions are readied with MPI_Pready in reverse order, with MPI_Pready_range in two halves,
// or with MPI_Pready_list (odd partitions, then even ones), or with --threads each by a thread of
// its own. The receiver learns of partitions with MPI_Parrived and reads each one back as soon as
// it says so (the library must have copied it to the device by then), or only waits, or polls half
// and then waits; after MPI_Waitall the whole buffer, its holes (never written) and the status
// (source, tag, count) are checked. Wrong uses give errors: a partition out of range, MPI_Pready on
// a receive request, MPI_Parrived on a send request, and at init a null request, a negative count
// and MPI_DATATYPE_NULL; the requests then still complete. Every request is freed.
//
// On fake-device-legacy memory an upload stays invisible until the library orders its work after the
// legacy default stream: a partition the library did not stage reaches the peer stale. Options:
//   --space S / --send-space S / --recv-space S   host, fake-device, fake-device-legacy, device
//   --threads                                       MPI_Pready from one thread per partition
#include <mpi.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/expect_error.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/strided_int.h"

namespace {

using namespace mcrp_test;

constexpr int kSentinel = -7;
constexpr int kTag = 31;
constexpr int kRounds = 3;

enum class ReadyForm { one_reversed, range_halves, list_odd_even, threads };
enum class ArrivalCheck { poll_each, wait_only, poll_half };

const char* name_of(ReadyForm f) {
  switch (f) {
    case ReadyForm::one_reversed:
      return "Pready reversed";
    case ReadyForm::range_halves:
      return "Pready_range halves";
    case ReadyForm::list_odd_even:
      return "Pready_list odd/even";
    case ReadyForm::threads:
      return "Pready from threads";
  }
  return "";
}

struct Env {
  Checker& checker;
  MemorySpace& send_space;
  MemorySpace& recv_space;
  int rank;
  int size;
  bool threads;  // MPI_THREAD_MULTIPLE provided and --threads given
  int right() const { return (rank + 1) % size; }
  int left() const { return (rank + size - 1) % size; }
};

// One case: the layout of a buffer of `partitions` x `count` elements of an int or an int and a hole.
struct Layout {
  int partitions;
  int count;
  bool holes;
  MPI_Datatype type() const { return holes ? strided_int() : MPI_INT; }
  int stride() const { return holes ? 2 : 1; }  // ints per element
  int ints() const { return partitions * count * stride(); }
  int partition_ints() const { return count * stride(); }
};

// The value element i of the message from `src` in `round` holds.
int value(int src, int round, int i) { return src * 1000003 + round * 7919 + i; }

// The ints of a buffer whose elements hold `src`'s round values; holes hold `hole`.
std::vector<int> buffer_values(const Layout& l, int src, int round, int hole) {
  std::vector<int> v(static_cast<std::size_t>(l.ints()), hole);
  for (int i = 0; i < l.partitions * l.count; ++i) v[static_cast<std::size_t>(i * l.stride())] = value(src, round, i);
  return v;
}

void ready(ReadyForm form, int partitions, MPI_Request send, std::vector<int>* rcs) {
  switch (form) {
    case ReadyForm::one_reversed:
      for (int p = partitions - 1; p >= 0; --p) rcs->push_back(MPI_Pready(p, send));
      break;
    case ReadyForm::range_halves: {
      const int half = partitions / 2;
      if (half > 0) rcs->push_back(MPI_Pready_range(0, half - 1, send));
      rcs->push_back(MPI_Pready_range(half, partitions - 1, send));
      break;
    }
    case ReadyForm::list_odd_even: {
      std::vector<int> odd, even;
      for (int p = 0; p < partitions; ++p) (p % 2 ? odd : even).push_back(p);
      rcs->push_back(MPI_Pready_list(static_cast<int>(odd.size()), odd.data(), send));
      rcs->push_back(MPI_Pready_list(static_cast<int>(even.size()), even.data(), send));
      break;
    }
    case ReadyForm::threads: {
      std::vector<int> thread_rcs(static_cast<std::size_t>(partitions), MPI_SUCCESS);
      std::vector<std::thread> readiers;
      for (int p = 0; p < partitions; ++p) {
        readiers.emplace_back(
            [&thread_rcs, p, send] { thread_rcs[static_cast<std::size_t>(p)] = MPI_Pready(p, send); });
      }
      for (std::thread& t : readiers) t.join();
      rcs->insert(rcs->end(), thread_rcs.begin(), thread_rcs.end());
      break;
    }
  }
}

// Polls MPI_Parrived over partitions [0, upto) until each has said so, reading each back at once.
void poll_partitions(const Env& e, const std::string& what, const Layout& l, int round, MPI_Request recv,
                     const SpaceBuffer<int>& received, int upto) {
  const std::vector<int> expected = buffer_values(l, e.left(), round, kSentinel);
  std::vector<bool> seen(static_cast<std::size_t>(upto), false);
  int left_to_see = upto;
  bool all_right = true;
  int rc = MPI_SUCCESS;
  while (left_to_see > 0 && rc == MPI_SUCCESS) {
    for (int p = 0; p < upto && rc == MPI_SUCCESS; ++p) {
      if (seen[static_cast<std::size_t>(p)]) continue;
      int flag = 0;
      rc = MPI_Parrived(recv, p, &flag);
      if (rc != MPI_SUCCESS || !flag) continue;
      seen[static_cast<std::size_t>(p)] = true;
      --left_to_see;
      const std::size_t first = static_cast<std::size_t>(p) * l.partition_ints();
      std::vector<int> got(static_cast<std::size_t>(l.partition_ints()));
      e.recv_space.download(got.data(), received.data() + first, got.size() * sizeof(int));
      for (std::size_t i = 0; i < got.size(); ++i) all_right = all_right && got[i] == expected[first + i];
    }
  }
  e.checker.check(rc == MPI_SUCCESS, what + ": MPI_Parrived returned " + std::to_string(rc));
  e.checker.check(all_right, what + ": each partition holds its data once MPI_Parrived says it arrived");
}

void run_case(const Env& e, const Layout& l, ReadyForm form) {
  const std::string what = std::string(name_of(form)) + ", " + std::to_string(l.partitions) + " x " +
                           std::to_string(l.count) + (l.holes ? " strided ints" : " ints");
  SpaceBuffer<int> sent(e.send_space, std::vector<int>(static_cast<std::size_t>(l.ints()), kSentinel));
  SpaceBuffer<int> received(e.recv_space, std::vector<int>(static_cast<std::size_t>(l.ints()), kSentinel));
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // receive, send
  int rc = MPI_Precv_init(received.data(), l.partitions, l.count, l.type(), e.left(), kTag, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &requests[0]);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Psend_init(sent.data(), l.partitions, l.count, l.type(), e.right(), kTag, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &requests[1]);
  }
  e.checker.check(rc == MPI_SUCCESS, what + ": MPI_Precv_init and MPI_Psend_init returned " + std::to_string(rc));
  if (rc != MPI_SUCCESS) return;
  for (int round = 0; round < kRounds; ++round) {
    const std::string this_round = what + ", round " + std::to_string(round);
    received.upload(std::vector<int>(static_cast<std::size_t>(l.ints()), kSentinel));
    rc = MPI_Startall(2, requests);
    e.checker.check(rc == MPI_SUCCESS, this_round + ": MPI_Startall returned " + std::to_string(rc));
    // Written after the start, as a producer of partitions does: MPI_Pready must order after it
    // (MPI_Start of the receive, which orders too, has run by then).
    sent.upload(buffer_values(l, e.rank, round, kSentinel - 1));  // the sender's holes are not sent
    std::vector<int> rcs;
    ready(form, l.partitions, requests[1], &rcs);
    bool readied = true;
    for (int r : rcs) readied = readied && r == MPI_SUCCESS;
    e.checker.check(readied, this_round + ": every MPI_Pready form returned MPI_SUCCESS");
    const auto arrival = static_cast<ArrivalCheck>(round % 3);
    if (arrival != ArrivalCheck::wait_only) {
      poll_partitions(e, this_round, l, round, requests[0], received,
                      arrival == ArrivalCheck::poll_each ? l.partitions : (l.partitions + 1) / 2);
    }
    MPI_Status statuses[2];
    rc = MPI_Waitall(2, requests, statuses);
    e.checker.check(rc == MPI_SUCCESS, this_round + ": MPI_Waitall returned " + std::to_string(rc));
    int count = -1;
    MPI_Get_count(&statuses[0], l.type(), &count);
    e.checker.check(
        statuses[0].MPI_SOURCE == e.left() && statuses[0].MPI_TAG == kTag && count == l.partitions * l.count,
        this_round + ": the receive's status says source " + std::to_string(statuses[0].MPI_SOURCE) + ", tag " +
            std::to_string(statuses[0].MPI_TAG) + ", count " + std::to_string(count));
    const std::vector<int> expected = buffer_values(l, e.left(), round, kSentinel);
    const std::vector<int> got = received.download();
    e.checker.expect_equal(this_round + ": the received buffer (holes untouched)", rc, got.data(), expected.data(),
                           expected.size());
  }
  for (MPI_Request& r : requests) {
    rc = MPI_Request_free(&r);
    e.checker.check(rc == MPI_SUCCESS && r == MPI_REQUEST_NULL, what + ": MPI_Request_free");
  }
}

// Wrong uses of an active pair of requests on this rank (to itself), which then still completes.
// `staged_send`/`staged_recv`: the library runs that side's request (device memory, the library
// loaded), and gives its own error classes.
void wrong_uses(const Env& e, bool staged_send, bool staged_recv) {
  const Layout l{4, 16, false};
  SpaceBuffer<int> sent(e.send_space, buffer_values(l, e.rank, 0, 0));
  SpaceBuffer<int> received(e.recv_space, std::vector<int>(static_cast<std::size_t>(l.ints()), kSentinel));
  MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
  MPI_Precv_init(received.data(), l.partitions, l.count, MPI_INT, e.rank, kTag + 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                 &recv);
  MPI_Psend_init(sent.data(), l.partitions, l.count, MPI_INT, e.rank, kTag + 1, MPI_COMM_WORLD, MPI_INFO_NULL, &send);
  MPI_Start(&recv);
  MPI_Start(&send);
  int flag = 0;
  int low_high[] = {l.partitions};
  const struct {
    const char* what;
    int rc;
    int expected;  // the class the library gives; the base MPI (MPICH 4.0.2) says MPI_ERR_OTHER for ranges
    bool library;  // the library answers the call
  } cases[] = {
      {"MPI_Pready of partition 4 of 4", MPI_Pready(l.partitions, send), MPI_ERR_ARG, staged_send},
      {"MPI_Pready of partition -1", MPI_Pready(-1, send), MPI_ERR_ARG, staged_send},
      {"MPI_Pready_range(2, 1)", MPI_Pready_range(2, 1, send), MPI_ERR_ARG, staged_send},
      {"MPI_Pready_list naming partition 4 of 4", MPI_Pready_list(1, low_high, send), MPI_ERR_ARG, staged_send},
      {"MPI_Parrived of partition 4 of 4", MPI_Parrived(recv, l.partitions, &flag), MPI_ERR_ARG, staged_recv},
      {"MPI_Pready on a receive request", MPI_Pready(0, recv), MPI_ERR_REQUEST, true},
      {"MPI_Parrived on a send request", MPI_Parrived(send, 0, &flag), MPI_ERR_REQUEST, true},
  };
  for (const auto& c : cases) {
    e.checker.check(c.rc != MPI_SUCCESS, std::string(c.what) + ": an error");
    if (c.library) {
      e.checker.check_beyond_base(error_class_of(c.rc) == c.expected,
                                  std::string(c.what) + ": class " + std::to_string(error_class_of(c.rc)));
    }
  }
  // Bad arguments at init: an error, and nothing made or written.
  const struct {
    const char* what;
    int rc;
  } inits[] = {
      {"MPI_Psend_init with a null request",
       MPI_Psend_init(sent.data(), l.partitions, l.count, MPI_INT, e.rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, nullptr)},
      {"MPI_Precv_init with a null request", MPI_Precv_init(received.data(), l.partitions, l.count, MPI_INT, e.rank, 0,
                                                            MPI_COMM_WORLD, MPI_INFO_NULL, nullptr)},
  };
  for (const auto& c : inits) e.checker.check(c.rc != MPI_SUCCESS, std::string(c.what) + ": an error");
  MPI_Request refused = MPI_REQUEST_NULL;
  const int negative =
      MPI_Precv_init(received.data(), l.partitions, -1, MPI_INT, e.rank, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &refused);
  e.checker.check(negative != MPI_SUCCESS, "MPI_Precv_init with a count of -1: an error");
  const int no_type = MPI_Psend_init(sent.data(), l.partitions, l.count, MPI_DATATYPE_NULL, e.rank, 0, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &refused);
  e.checker.check(no_type != MPI_SUCCESS, "MPI_Psend_init with MPI_DATATYPE_NULL: an error");
  const int readied = MPI_Pready_range(0, l.partitions - 1, send);
  MPI_Request both[2] = {recv, send};
  const int waited = MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
  const std::vector<int> expected = buffer_values(l, e.rank, 0, 0);
  const std::vector<int> got = received.download();
  e.checker.expect_equal("after the wrong uses, the requests still complete", readied == MPI_SUCCESS ? waited : readied,
                         got.data(), expected.data(), expected.size());
  MPI_Request_free(&both[0]);
  MPI_Request_free(&both[1]);
}

}  // namespace

int main(int argc, char** argv) {
  const bool want_threads = flag(argc, argv, "--threads");
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, want_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int exit_code = kSkipExitCode;
  {
    SendReceiveSpaces spaces = send_receive_spaces_from_arguments(argc, argv);
    if (spaces.ready()) {
      Checker checker;
      const bool threads = want_threads && provided >= MPI_THREAD_MULTIPLE;
      if (want_threads && !threads) checker.skip("MPI_THREAD_MULTIPLE not provided: no MPI_Pready from threads");
      const Env e{checker, *spaces.send, *spaces.recv, rank, size, threads};
      const bool library = MPIX_Query_cuda_support() == 1;
      for (int partitions : {1, 3, 8}) {
        for (int count : {0, 1, 1000, 4099}) {
          for (bool holes : {false, true}) {
            for (ReadyForm form : {ReadyForm::one_reversed, ReadyForm::range_halves, ReadyForm::list_odd_even}) {
              run_case(e, Layout{partitions, count, holes}, form);
            }
            if (threads) run_case(e, Layout{partitions, count, holes}, ReadyForm::threads);
          }
        }
      }
      wrong_uses(e, library && spaces.send_name != "host", library && spaces.recv_name != "host");
      exit_code = checker.finish(MPI_COMM_WORLD, "test_partitioned");
    }
  }
  MPI_Finalize();
  return exit_code;
}
