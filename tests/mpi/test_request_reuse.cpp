// Request handles reused across threads (runtime/persistent.h). One thread completes nonblocking
// point-to-point requests on device memory, by every Wait and Test form, while another creates,
// starts, completes and frees persistent ones. MPICH frees a completed nonblocking request's handle
// at once and gives the value to the next request made, often the other thread's persistent one.
// The library used to look a handle up again after the base MPI had completed it: it then found the
// other thread's persistent request under it, reported that request's empty status (MPI_ANY_SOURCE,
// MPI_ANY_TAG, no data) for the receive, and marked the persistent request inactive, whose own
// receive later reported the same (test_p2p_random --threads found it, 2026-11-29).
// Messages go to the rank itself, on a duplicate of MPI_COMM_WORLD per thread; every status and
// every payload is checked.
//   --space S (host, fake-device, device)  --iterations N (20000)
#include <mpi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr int kPersistentTag = 7;

std::vector<int> payload(int iteration, int n) {
  std::vector<int> values(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = iteration * 1009 + i;
  return values;
}

// Completes {receive, send} by the form `iteration` picks; the receive's status in *status.
int complete(int iteration, MPI_Request requests[2], MPI_Status* status) {
  MPI_Status statuses[2];
  int rc = MPI_SUCCESS;
  switch (iteration % 5) {
    case 0:
      rc = MPI_Wait(&requests[0], status);
      return rc == MPI_SUCCESS ? MPI_Wait(&requests[1], MPI_STATUS_IGNORE) : rc;
    case 1: {
      for (int flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Test(&requests[0], &flag, status);
      for (int flag = 0; !flag && rc == MPI_SUCCESS;) rc = MPI_Test(&requests[1], &flag, MPI_STATUS_IGNORE);
      return rc;
    }
    case 2:
      rc = MPI_Waitall(2, requests, statuses);
      *status = statuses[0];
      return rc;
    case 3:
      for (int done = 0; done < 2 && rc == MPI_SUCCESS; ++done) {
        int index = MPI_UNDEFINED;
        rc = MPI_Waitany(2, requests, &index, &statuses[0]);
        if (index == 0) *status = statuses[0];
      }
      return rc;
    default:
      for (int done = 0; done < 2 && rc == MPI_SUCCESS;) {
        int count = 0, indices[2];
        rc = MPI_Testsome(2, requests, &count, indices, statuses);
        for (int k = 0; k < count && count != MPI_UNDEFINED; ++k) {
          if (indices[k] == 0) *status = statuses[k];
        }
        done += count == MPI_UNDEFINED ? 2 : count;
      }
      return rc;
  }
}

// Nonblocking receives and sends to itself, each completed by one of the forms above.
void nonblocking_requests(Checker& checker, MemorySpace& space, MPI_Comm comm, int rank, int iterations) {
  SpaceBuffer<int> in(space, 64), out(space, 64);
  for (int k = 0; k < iterations; ++k) {
    const int n = 1 + k % 64;
    const int tag = k % 1000;
    out.upload(payload(k, n));
    MPI_Request requests[2];
    MPI_Irecv(in.data(), 64, MPI_INT, rank, tag, comm, &requests[0]);
    MPI_Isend(out.data(), n, MPI_INT, rank, tag, comm, &requests[1]);
    MPI_Status status;
    const int rc = complete(k, requests, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_INT, &count);
    const std::string what = "nonblocking receive " + std::to_string(k) + " completed by form " + std::to_string(k % 5);
    checker.check(rc == MPI_SUCCESS && status.MPI_SOURCE == rank && status.MPI_TAG == tag && count == n,
                  what + ": status (rc " + std::to_string(rc) + ", source " + std::to_string(status.MPI_SOURCE) +
                      " tag " + std::to_string(status.MPI_TAG) + " count " + std::to_string(count) + ")");
    const std::vector<int> expected = payload(k, n);
    checker.expect_equal(what + ": data", rc, in.download().data(), expected.data(), expected.size());
  }
}

// Persistent receive and send to itself: made, started, completed and freed every iteration.
void persistent_requests(Checker& checker, MemorySpace& space, MPI_Comm comm, int rank, int iterations) {
  SpaceBuffer<int> in(space, 32), out(space, 32);
  for (int k = 0; k < iterations; ++k) {
    const int n = 1 + k % 32;
    out.upload(payload(k, n));
    MPI_Request requests[2];
    MPI_Recv_init(in.data(), 32, MPI_INT, rank, kPersistentTag, comm, &requests[0]);
    MPI_Send_init(out.data(), n, MPI_INT, rank, kPersistentTag, comm, &requests[1]);
    MPI_Status statuses[2];
    int rc = MPI_Startall(2, requests);
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(2, requests, statuses);
    int count = -1;
    MPI_Get_count(&statuses[0], MPI_INT, &count);
    const std::string what = "persistent receive " + std::to_string(k);
    checker.check(rc == MPI_SUCCESS && statuses[0].MPI_SOURCE == rank && statuses[0].MPI_TAG == kPersistentTag &&
                      count == n,
                  what + ": status (rc " + std::to_string(rc) + ", source " + std::to_string(statuses[0].MPI_SOURCE) +
                      " tag " + std::to_string(statuses[0].MPI_TAG) + " count " + std::to_string(count) + ")");
    const std::vector<int> expected = payload(k, n);
    checker.expect_equal(what + ": data", rc, in.download().data(), expected.data(), expected.size());
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int iterations = std::atoi(option(argc, argv, "--iterations", "20000").c_str());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int exit_code = kSkipExitCode;
  {
    const std::unique_ptr<MemorySpace> space = space_option(argc, argv, "host");
    if (provided < MPI_THREAD_MULTIPLE) {
      if (rank == 0) std::printf("SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    } else if (space) {
      MPI_Comm comms[2];
      for (MPI_Comm& comm : comms) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      }
      Checker checkers[2];
      std::thread persistent([&] { persistent_requests(checkers[1], *space, comms[1], rank, iterations); });
      nonblocking_requests(checkers[0], *space, comms[0], rank, iterations);
      persistent.join();
      checkers[0].absorb(checkers[1]);
      for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
      exit_code = checkers[0].finish(MPI_COMM_WORLD, "request_reuse");
    }
  }
  MPI_Finalize();
  return exit_code;
}
