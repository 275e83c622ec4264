// Buffered sends through a buffer attached in a memory space (issue 10): MPI_Buffer_attach and
// MPI_Buffer_detach, int and _c, with MPI_Bsend, MPI_Ibsend and MPI_Bsend_init (started twice) from
// buffers in the same space to the next rank, several messages outstanding in the attached buffer
// at once, checked against their envelopes; detach gives back the address and size attached (after
// delivering what was buffered); a second attach while one is attached is refused, a buffered send
// larger than the attached space is refused, and attach, send, detach run again with the other count form.
// With the library on device memory (a base MPI without CUDA support), the attached buffer is not
// written: the library attaches host memory in its place, where the base MPI copies the messages
// (on a GPU, without it the first buffered send crashes). Options:
//   --space S   host, fake-device, device
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/cuda_aware_base.h"
#include "tests/mpi/expect_error.h"
#include "tests/mpi/memory_spaces.h"
#include "tests/mpi/p2p_messages.h"

namespace {

using namespace mcrp_test;

constexpr unsigned char kUnwritten = 0xA5;
constexpr int kMessages = 3;                 // Bsend, Ibsend, Bsend_init: outstanding together
constexpr MPI_Count kInts[] = {1, 1000, 40000};  // elements of each message

// Enough attached space for the three messages with their overheads, and for the persistent one
// started again: the base MPI may not have reclaimed its first message's space by then.
MPI_Count attached_bytes() {
  MPI_Count bytes = 0;
  for (MPI_Count n : kInts) bytes += n * static_cast<MPI_Count>(sizeof(int)) + MPI_BSEND_OVERHEAD;
  return bytes + kInts[kMessages - 1] * static_cast<MPI_Count>(sizeof(int)) + MPI_BSEND_OVERHEAD;
}

struct Env {
  Checker& checker;
  MemorySpace& space;
  int rank;
  int size;
  bool library_on_device;  // the library runs, the space is device memory, the base MPI is not CUDA-aware
};

// One round: attach (int or _c form), three buffered sends to the next rank in flight together,
// receives from the previous rank, detach.
void round_trip(const Env& e, bool wide, int round) {
  const std::string form = wide ? "_c" : "";
  const MPI_Count bytes = attached_bytes();
  SpaceBuffer<unsigned char> attached(e.space, std::vector<unsigned char>(static_cast<std::size_t>(bytes), kUnwritten));
  const int attach_rc = wide ? MPI_Buffer_attach_c(attached.data(), bytes)
                             : MPI_Buffer_attach(attached.data(), static_cast<int>(bytes));
  e.checker.check(attach_rc == MPI_SUCCESS, "MPI_Buffer_attach" + form + ": returned " + std::to_string(attach_rc));

  // A second buffer while one is attached is refused (MPICH 4.0.2 and Intel MPI say MPI_ERR_BUFFER,
  // the mpich 5.0.2 wheel MPI_ERR_OTHER: MPI names no class), and the first stays attached.
  std::vector<char> other(64);
  const int again_class = error_class_of(MPI_Buffer_attach(other.data(), 64));
  e.checker.check(again_class != MPI_SUCCESS, "a second MPI_Buffer_attach is refused: class " + std::to_string(again_class));

  const int to = (e.rank + 1) % e.size, from = (e.rank + e.size - 1) % e.size;
  std::vector<std::unique_ptr<SpaceBuffer<int>>> sends, receives;
  for (int m = 0; m < kMessages; ++m) {
    sends.push_back(std::make_unique<SpaceBuffer<int>>(e.space, message(e.rank, round * 10 + m, kInts[m])));
    receives.push_back(
        std::make_unique<SpaceBuffer<int>>(e.space, std::vector<int>(static_cast<std::size_t>(kInts[m]), kSentinel)));
  }
  // The receives are posted after the sends: each send must have been buffered to complete.
  int rc[kMessages] = {};
  rc[0] = MPI_Bsend(sends[0]->data(), static_cast<int>(kInts[0]), MPI_INT, to, round * 10, MPI_COMM_WORLD);
  MPI_Request ibsend = MPI_REQUEST_NULL, persistent = MPI_REQUEST_NULL;
  rc[1] = MPI_Ibsend(sends[1]->data(), static_cast<int>(kInts[1]), MPI_INT, to, round * 10 + 1, MPI_COMM_WORLD, &ibsend);
  rc[2] = MPI_Bsend_init(sends[2]->data(), static_cast<int>(kInts[2]), MPI_INT, to, round * 10 + 2, MPI_COMM_WORLD,
                         &persistent);
  if (rc[2] == MPI_SUCCESS) rc[2] = MPI_Start(&persistent);
  if (rc[1] == MPI_SUCCESS) rc[1] = MPI_Wait(&ibsend, MPI_STATUS_IGNORE);
  if (rc[2] == MPI_SUCCESS) rc[2] = MPI_Wait(&persistent, MPI_STATUS_IGNORE);

  // A buffered send larger than the whole attached space is refused (MPI_ERR_BUFFER). (How much of
  // the space the three messages still hold depends on the base MPI's protocol.)
  const int too_many = static_cast<int>(bytes / static_cast<MPI_Count>(sizeof(int)));
  SpaceBuffer<int> extra(e.space, std::vector<int>(static_cast<std::size_t>(too_many), 1));
  const int full_class = error_class_of(MPI_Bsend(extra.data(), too_many, MPI_INT, to, 99, MPI_COMM_WORLD));
  e.checker.check(full_class == MPI_ERR_BUFFER, "MPI_Bsend larger than the attached space: class " + std::to_string(full_class));

  for (int m = 0; m < kMessages; ++m) {
    const int recv_rc = MPI_Recv(receives[m]->data(), static_cast<int>(kInts[m]), MPI_INT, from, round * 10 + m,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const std::vector<int> expected = message(from, round * 10 + m, kInts[m]);
    const std::vector<int> got = receives[m]->download();
    const char* names[kMessages] = {"MPI_Bsend", "MPI_Ibsend", "MPI_Bsend_init"};
    e.checker.expect_equal(std::string(names[m]) + " through MPI_Buffer_attach" + form + " round " +
                               std::to_string(round),
                           rc[m] == MPI_SUCCESS ? recv_rc : rc[m], got.data(), expected.data(), got.size());
  }
  // The persistent send again, buffered once more, into space the first messages left.
  int second = MPI_Start(&persistent);
  if (second == MPI_SUCCESS) second = MPI_Wait(&persistent, MPI_STATUS_IGNORE);
  receives[2]->upload(std::vector<int>(static_cast<std::size_t>(kInts[2]), kSentinel));
  const int second_recv = MPI_Recv(receives[2]->data(), static_cast<int>(kInts[2]), MPI_INT, from, round * 10 + 2,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const std::vector<int> expected = message(from, round * 10 + 2, kInts[2]);
  const std::vector<int> got = receives[2]->download();
  e.checker.expect_equal("MPI_Bsend_init started again round " + std::to_string(round),
                         second == MPI_SUCCESS ? second_recv : second, got.data(), expected.data(), got.size());
  MPI_Request_free(&persistent);

  void* detached = nullptr;
  MPI_Count detached_bytes = 0;
  int detach_rc = MPI_SUCCESS;
  if (wide) {
    detach_rc = MPI_Buffer_detach_c(&detached, &detached_bytes);
  } else {
    int narrow = 0;
    detach_rc = MPI_Buffer_detach(&detached, &narrow);
    detached_bytes = narrow;
  }
  e.checker.check(detach_rc == MPI_SUCCESS && detached == attached.data() && detached_bytes == bytes,
                  "MPI_Buffer_detach" + form + " gives back the attached address and size");
  if (e.library_on_device) {
    const std::vector<unsigned char> after = attached.download();
    const bool untouched = std::all_of(after.begin(), after.end(), [](unsigned char b) { return b == kUnwritten; });
    e.checker.check_beyond_base(untouched, "the attached device buffer is not written (host memory in its place)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string space_name = option(argc, argv, "--space", "host");
  std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
  if (!space) {
    MPI_Finalize();
    return kSkipExitCode;
  }
  Checker checker;
  // The library answers 1 here, plain MPICH 0.
  const bool library = MPIX_Query_cuda_support() == 1;
  // A CUDA-aware base MPI gets the device buffer attached as it is, and writes it.
  const Env e{checker, *space, rank, size,
              library && space_name.rfind("device") != std::string::npos && !mcrp_test::base_takes_device_buffers()};
  for (int round = 0; round < 4; ++round) round_trip(e, round % 2 == 1, round);
  // Nothing attached: MPI_Buffer_detach returns NULL and 0 (MPICH) or an error; either way the
  // library adds nothing. A buffered send has no space.
  std::vector<int> one(1, 1);
  const int none_class = error_class_of(MPI_Bsend(one.data(), 1, MPI_INT, (rank + 1) % size, 98, MPI_COMM_WORLD));
  checker.check(none_class == MPI_ERR_BUFFER, "MPI_Bsend with nothing attached: class " + std::to_string(none_class));
  const int code = checker.finish(MPI_COMM_WORLD, "test_attached_buffer");
  space.reset();
  MPI_Finalize();
  return code;
}
