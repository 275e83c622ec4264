// Ranks started with different MCRPMPI_P2P_EAGER_LIMIT values (mpiexec MPMD sections, each with its
// own environment) still agree on one limit: the device-only protocol (p2p/engine.h) takes it from the tuning
// table, where rank 0's value counts for all. Were each rank to use its own, a rank with a larger
// limit would send inline payloads longer than the header receive a rank with a smaller one posts,
// and the receive would fail with MPI_ERR_TRUNCATE.
//   --assert HOW     `env`: MCRPMPI_P2P_DEVICE_ONLY=1 asserted MPI_COMM_WORLD at MPI_Init; `info`:
//                    the exchanges run on a duplicate carrying mpi_assert_memory_alloc_kinds=cuda:device
//   --around A,B,..  the limits the ranks were started with: messages of L-1, L and L+1 bytes are
//                    exchanged for each (and 0, 1 and the built-in 65536 around too)
//   --space S        where the buffers are: fake-device (default; MCRPMPI_FAKE_DEVICE=1) or device
// Each size runs as an all-pairs Isend/Irecv exchange with one Waitall, then as a ring whose
// receiver probes first and receives by the probed size; every byte, the sentinel after it and
// every status are checked.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/device_only_comm.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

constexpr unsigned char kSentinel = 0xA5;

unsigned char byte_of(int src, int dst, std::size_t bytes, std::size_t i) {
  return static_cast<unsigned char>((src * 37 + dst * 11 + bytes * 5 + i * 13) % 251);
}

std::vector<unsigned char> message(int src, int dst, std::size_t bytes) {
  std::vector<unsigned char> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = byte_of(src, dst, bytes, i);
  return v;
}

// The sizes to exchange: 0, 1, and L-1, L, L+1 around each limit in play.
std::vector<std::size_t> sizes_around(const std::string& limits) {
  std::set<std::size_t> sizes{0, 1};
  std::stringstream list(limits + ",65536");
  for (std::string item; std::getline(list, item, ',');) {
    if (item.empty()) continue;
    const std::size_t limit = std::strtoull(item.c_str(), nullptr, 10);
    for (std::size_t s : {limit, limit + 1}) sizes.insert(s);
    if (limit > 0) sizes.insert(limit - 1);
  }
  return {sizes.begin(), sizes.end()};
}

struct Env {
  Checker& checker;
  MemorySpace& space;
  MPI_Comm comm;
  int rank;
  int size;
};

// A receive buffer of `bytes` plus one sentinel byte, and what to expect in it after the receive.
struct Receive {
  std::unique_ptr<SpaceBuffer<unsigned char>> buffer;
  int src = 0;
  std::size_t bytes = 0;
};

Receive make_receive(const Env& e, int src, std::size_t bytes) {
  return Receive{std::make_unique<SpaceBuffer<unsigned char>>(e.space, std::vector<unsigned char>(bytes + 1, kSentinel)),
                 src, bytes};
}

// The buffer holds what `r.src` sent and then the sentinel; the status names the source and size.
void expect_received(const Env& e, const std::string& what, int rc, const Receive& r, const MPI_Status& status,
                     int tag) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    MPI_Error_string(rc, text, &length);
    e.checker.check(false, what + ": error " + text);
    return;
  }
  std::vector<unsigned char> expected = message(r.src, e.rank, r.bytes);
  expected.push_back(kSentinel);
  const std::vector<unsigned char> got = r.buffer->download();
  const auto mismatch = std::mismatch(got.begin(), got.end(), expected.begin());
  e.checker.check(mismatch.first == got.end(),
                  what + ": data from " + std::to_string(r.src) + " differs at byte " +
                      std::to_string(mismatch.first - got.begin()) + " of " + std::to_string(r.bytes));
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  e.checker.check(status.MPI_SOURCE == r.src && status.MPI_TAG == tag && count == static_cast<int>(r.bytes),
                  what + " (status): expected source " + std::to_string(r.src) + " count " + std::to_string(r.bytes) +
                      ", got " + std::to_string(status.MPI_SOURCE) + " " + std::to_string(count));
}

std::unique_ptr<SpaceBuffer<unsigned char>> send_buffer(const Env& e, int dst, std::size_t bytes) {
  return std::make_unique<SpaceBuffer<unsigned char>>(e.space, message(e.rank, dst, bytes));
}

// Every rank sends `bytes` to every other rank and receives from each, receives posted in reverse
// rank order, one Waitall over all of it.
void all_pairs(const Env& e, std::size_t bytes) {
  const std::string what = "all-pairs Isend/Irecv of " + std::to_string(bytes) + " B";
  const int tag = 100;
  std::vector<Receive> receives;
  std::vector<std::unique_ptr<SpaceBuffer<unsigned char>>> sends;
  std::vector<MPI_Request> requests;
  for (int peer = e.size - 1; peer >= 0; --peer) {
    if (peer == e.rank) continue;
    receives.push_back(make_receive(e, peer, bytes));
    requests.emplace_back();
    MPI_Irecv(receives.back().buffer->data(), static_cast<int>(bytes + 1), MPI_BYTE, peer, tag, e.comm, &requests.back());
  }
  for (int peer = 0; peer < e.size; ++peer) {
    if (peer == e.rank) continue;
    sends.push_back(send_buffer(e, peer, bytes));
    requests.emplace_back();
    MPI_Isend(sends.back()->data(), static_cast<int>(bytes), MPI_BYTE, peer, tag, e.comm, &requests.back());
  }
  std::vector<MPI_Status> statuses(requests.size());
  const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  for (std::size_t i = 0; i < receives.size(); ++i) {
    const int status_rc = rc == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : rc;
    expect_received(e, what, status_rc, receives[i], statuses[i], tag);
  }
  for (std::size_t i = receives.size(); i < requests.size(); ++i) {
    const int status_rc = rc == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : rc;
    e.checker.check(status_rc == MPI_SUCCESS, what + ": send completes");
  }
}

// Each rank sends to its right; the left one's message is probed first (the probe must report the
// payload's size) and received by exactly that size.
void probed_ring(const Env& e, std::size_t bytes) {
  const std::string what = "ring Probe + Recv of " + std::to_string(bytes) + " B";
  const int tag = 200, right = (e.rank + 1) % e.size, left = (e.rank + e.size - 1) % e.size;
  auto out = send_buffer(e, right, bytes);
  MPI_Request request;
  MPI_Isend(out->data(), static_cast<int>(bytes), MPI_BYTE, right, tag, e.comm, &request);
  MPI_Status probed;
  int rc = MPI_Probe(left, tag, e.comm, &probed);
  int count = -1;
  MPI_Get_count(&probed, MPI_BYTE, &count);
  e.checker.check(rc == MPI_SUCCESS && count == static_cast<int>(bytes),
                  what + ": probe reports " + std::to_string(count) + " B");
  Receive in = make_receive(e, left, bytes);
  MPI_Status status;
  rc = MPI_Recv(in.buffer->data(), std::max(count, 0), MPI_BYTE, left, tag, e.comm, &status);
  expect_received(e, what, rc, in, status, tag);
  e.checker.check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, what + ": send completes");
}

// The exchanges prove something only on a communicator that runs the device-only protocol, where a
// host buffer is refused before anything is sent (on the staged path it would be sent).
void expect_protocol(const Env& e) {
  int host = 1;
  int error_class = MPI_SUCCESS;
  MPI_Error_class(MPI_Send(&host, 1, MPI_INT, e.rank, 300, e.comm), &error_class);
  e.checker.check(error_class == MPI_ERR_BUFFER, "the communicator runs the device-only protocol (a host send is "
                                                 "refused with MPI_ERR_BUFFER)");
}

// WORLD (asserted at MPI_Init by MCRPMPI_P2P_DEVICE_ONLY=1), or a duplicate asserted by the info key.
MPI_Comm communicator_for(const std::string& how) {
  return how == "info" ? dup_asserting_device_only(MPI_COMM_WORLD) : MPI_COMM_WORLD;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = space_option(argc, argv, "fake-device");
    if (space) {
      Checker checker;
      int rank = 0, size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      const MPI_Comm comm = communicator_for(option(argc, argv, "--assert", "env"));
      MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      const Env env{checker, *space, comm, rank, size};
      expect_protocol(env);
      for (std::size_t bytes : sizes_around(option(argc, argv, "--around", ""))) {
        all_pairs(env, bytes);
        probed_ring(env, bytes);
      }
      if (comm != MPI_COMM_WORLD) {
        MPI_Comm to_free = comm;
        MPI_Comm_free(&to_free);
      }
      exit_code = checker.finish(MPI_COMM_WORLD, "test_p2p_eager_limits");
    }
  }
  MPI_Finalize();
  return exit_code;
}
