// The completion rule of the library's device persistent requests, exercised without a GPU: a
// handle registered by mcrp::create_persistent completes only when the collective behind it has,
// through every Wait/Test entry point (the wrappers of pmpi/requests.cpp are linked in). The
// collective here is a host Iallreduce, so it cannot finish before rank 0 starts it: until then,
// the other ranks' Test, Testany, Testsome, Testall and Request_get_status must all say
// "incomplete" -- the handle itself (a Barrier_init on MPI_COMM_SELF) completes at once, so a
// library that ignored the collective would say "complete" and fail here. Then each start is
// completed through a different Wait/Test form, mixed with a point-to-point request, and the sum
// checked; finally Request_free on a started request finishes its collective.
#include <mpi.h>

#include <string>
#include <vector>

#include "runtime/persistent.h"
#include "tests/mpi/check.h"

namespace {

mcrp_test::Checker g_check;
int g_rank = 0, g_size = 1;

enum class Completion { wait, waitall, waitany, waitsome, test_loop, testall_loop, count };
const char* const kNames[] = {"Wait", "Waitall", "Waitany", "Waitsome", "Test loop", "Testall loop"};

// While rank 0 holds back, the collective cannot complete anywhere.
void expect_incomplete(MPI_Request handle, const std::string& what) {
  int flag = -1, index = -2, outcount = -2, indices[1];
  MPI_Request one[1] = {handle};
  g_check.check(MPI_Test(&handle, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 0, what + ": Test says incomplete");
  g_check.check(MPI_Testany(1, one, &index, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 0,
                what + ": Testany says incomplete");
  g_check.check(MPI_Testsome(1, one, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS && outcount == 0,
                what + ": Testsome says none completed");
  g_check.check(MPI_Testall(1, one, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag == 0,
                what + ": Testall says incomplete");
  g_check.check(MPI_Request_get_status(handle, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 0,
                what + ": Request_get_status says incomplete");
  g_check.check(one[0] == handle, what + ": the handle is left alone");
}

// Completes {handle, a self send/receive pair} through `how`.
int complete(Completion how, MPI_Request& handle) {
  int token = g_rank, got = -1;
  MPI_Request all[3] = {MPI_REQUEST_NULL, handle, MPI_REQUEST_NULL};
  MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &all[0]);
  MPI_Isend(&token, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &all[2]);
  int rc = MPI_SUCCESS, done = 0;
  switch (how) {
    case Completion::wait:
      for (MPI_Request& r : all) rc = rc == MPI_SUCCESS ? MPI_Wait(&r, MPI_STATUS_IGNORE) : rc;
      break;
    case Completion::waitall:
      rc = MPI_Waitall(3, all, MPI_STATUSES_IGNORE);
      break;
    case Completion::waitany:
      for (int k = 0; k < 3 && rc == MPI_SUCCESS; ++k) {
        int index = MPI_UNDEFINED;
        rc = MPI_Waitany(3, all, &index, MPI_STATUS_IGNORE);
        g_check.check(index != MPI_UNDEFINED, "Waitany finds an active request");
      }
      break;
    case Completion::waitsome:
      while (done < 3 && rc == MPI_SUCCESS) {
        int outcount = 0, indices[3];
        rc = MPI_Waitsome(3, all, &outcount, indices, MPI_STATUSES_IGNORE);
        done += outcount == MPI_UNDEFINED ? 3 : outcount;
      }
      break;
    case Completion::test_loop:
      for (MPI_Request& r : all) {
        int flag = 0;
        while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      }
      break;
    case Completion::testall_loop:
      while (rc == MPI_SUCCESS && !done) rc = MPI_Testall(3, all, &done, MPI_STATUSES_IGNORE);
      break;
    case Completion::count:
      break;
  }
  g_check.check(got == g_rank, std::string(kNames[static_cast<int>(how)]) + ": the point-to-point pair completed");
  g_check.check(all[1] == handle, std::string(kNames[static_cast<int>(how)]) + ": the persistent handle stays");
  return rc;
}

// Four handles on each of two communicators, started with one Startall in opposite communicator
// orders on even and odd ranks, completed through each Wait/Test form in turn (the layout of the
// GPU test test_persistent_gpu, with host collectives behind the handles).
void many_handles_two_comms() {
  constexpr int kPerComm = 4, kAll = 2 * kPerComm;
  MPI_Comm comms[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  std::vector<int> send(kAll), recv(kAll);
  std::vector<MPI_Request> on[2] = {std::vector<MPI_Request>(kPerComm), std::vector<MPI_Request>(kPerComm)};
  for (int c = 0; c < 2; ++c) {
    const MPI_Comm comm = comms[c];
    for (int i = 0; i < kPerComm; ++i) {
      const int k = c * kPerComm + i;
      auto iallreduce = [comm, s = &send[k], r = &recv[k]](MPI_Request* q) {
        return PMPI_Iallreduce(s, r, 1, MPI_INT, MPI_SUM, comm, q);
      };
      g_check.check(mcrp::create_persistent(iallreduce, {}, &on[c][i]).ok(), "create_persistent");
    }
  }
  for (int start = 0; start < 8; ++start) {
    const int how = start % 4;
    const std::string what = "two comms, start " + std::to_string(start) + " [" + kNames[how] + "]";
    for (int k = 0; k < kAll; ++k) {
      send[k] = start + k;
      recv[k] = -1;
    }
    std::vector<MPI_Request> all = on[g_rank % 2];
    all.insert(all.end(), on[1 - g_rank % 2].begin(), on[1 - g_rank % 2].end());
    g_check.check(MPI_Startall(kAll, all.data()) == MPI_SUCCESS, what + ": Startall");
    int rc = MPI_SUCCESS, done = 0;
    if (how == 0) rc = MPI_Waitall(kAll, all.data(), MPI_STATUSES_IGNORE);
    while (how == 1 && rc == MPI_SUCCESS && !done) rc = MPI_Testall(kAll, all.data(), &done, MPI_STATUSES_IGNORE);
    for (int k = 0; how == 2 && k < kAll && rc == MPI_SUCCESS; ++k) {
      int index = MPI_UNDEFINED;
      rc = MPI_Waitany(kAll, all.data(), &index, MPI_STATUS_IGNORE);
      g_check.check(index != MPI_UNDEFINED, what + ": Waitany completes one per call");
    }
    while (how == 3 && rc == MPI_SUCCESS && done < kAll) {
      int outcount = 0, indices[kAll];
      rc = MPI_Waitsome(kAll, all.data(), &outcount, indices, MPI_STATUSES_IGNORE);
      g_check.check(outcount != MPI_UNDEFINED, what + ": Waitsome finds active requests");
      done += outcount == MPI_UNDEFINED ? kAll : outcount;
    }
    g_check.check(rc == MPI_SUCCESS, what + ": completion");
    for (int k = 0; k < kAll; ++k) g_check.check(recv[k] == (start + k) * g_size, what + ": sum " + std::to_string(k));
  }
  for (auto& set : on) {
    for (MPI_Request& r : set) MPI_Request_free(&r);
  }
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm signals;  // "I have started": keeps rank 0 from starting before the others have looked
  MPI_Comm_dup(MPI_COMM_WORLD, &signals);
  int send = 0, recv = -1;
  auto iallreduce = [&](MPI_Request* q) { return PMPI_Iallreduce(&send, &recv, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q); };
  MPI_Request handle = MPI_REQUEST_NULL;
  const mcrp::Status created = mcrp::create_persistent(iallreduce, {}, &handle);
  g_check.check(created.ok(), "create_persistent");
  for (int k = 0; k < static_cast<int>(Completion::count); ++k) {
    const Completion how = static_cast<Completion>(k);
    const std::string what = std::string("start ") + std::to_string(k) + " [" + kNames[k] + "]";
    send = (g_rank + 1) * (k + 1);
    recv = -1;
    if (g_rank == 0) {
      for (int peer = 1; peer < g_size; ++peer) MPI_Recv(nullptr, 0, MPI_BYTE, peer, k, signals, MPI_STATUS_IGNORE);
      g_check.check(MPI_Start(&handle) == MPI_SUCCESS, what + ": Start");
    } else {
      g_check.check(MPI_Start(&handle) == MPI_SUCCESS, what + ": Start");
      expect_incomplete(handle, what);
      MPI_Send(nullptr, 0, MPI_BYTE, 0, k, signals);
    }
    g_check.check(complete(how, handle) == MPI_SUCCESS, what + ": completion");
    g_check.check(recv == (k + 1) * g_size * (g_size + 1) / 2, what + ": sum");
  }
  // Two handles, started together and completed together, several times.
  {
    int send2 = g_rank, recv2 = -1;
    MPI_Request pair[2] = {handle, MPI_REQUEST_NULL};
    auto iallreduce2 = [&](MPI_Request* q) {
      return PMPI_Iallreduce(&send2, &recv2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, q);
    };
    g_check.check(mcrp::create_persistent(iallreduce2, {}, &pair[1]).ok(), "create_persistent (second)");
    for (int k = 0; k < 3; ++k) {
      send = k;
      g_check.check(MPI_Startall(2, pair) == MPI_SUCCESS, "Startall of two");
      g_check.check(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall of two");
      g_check.check(recv == k * g_size && recv2 == g_size - 1, "Startall of two: results");
    }
    MPI_Request_free(&pair[1]);
  }
  many_handles_two_comms();
  // Freeing a started request lets its collective finish (here, before the call returns).
  send = 1;
  recv = -1;
  g_check.check(MPI_Start(&handle) == MPI_SUCCESS && MPI_Request_free(&handle) == MPI_SUCCESS, "Start then Request_free");
  g_check.check(handle == MPI_REQUEST_NULL && recv == g_size, "the freed request's collective completed");
  MPI_Comm_free(&signals);
  const int rc = g_check.finish(MPI_COMM_WORLD, "test_persistent_completion");
  MPI_Finalize();
  return rc;
}
