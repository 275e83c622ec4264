// Datatypes whose bytes are not where a plain reading of the buffer argument puts them, against the
// results MPI defines (the `.base` run holds plain MPICH on host memory to the same expectations):
//   - a gap-free type whose elements are out of address order, {(MPI_INT, +4), (MPI_INT, +0)}
//     (size == extent == true extent, lower bound 0, yet not plain bytes): receiving the ints
//     (a, b) into one element stores (b, a); sending one element sends (b, a). Every data-movement
//     collective, blocking and nonblocking, on MPI_COMM_WORLD and MPI_COMM_SELF (a one-rank copy),
//     with the swapped type on the receive side and on the send side; point-to-point too.
//   - MPI_BOTTOM (NULL) with datatypes of absolute addresses into the memory space: the buffer
//     argument says nothing about where the data is, its first byte does.
// Run with --space host, fake-device-legacy (uploads become visible only once the library orders
// its work after the legacy default stream, so device data handed to the base MPI as host memory
// reads stale), with MCRPMPI_STAGED_CHUNK_BYTES=16 (pipelined bcast and allgather rows) and with
// the fake NCCL.
#include <mpi.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/comm_position.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::rank_of;
using mcrp_test::size_of;
using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

constexpr int kPairs = 12;  // swapped elements per rank's block: 96 bytes, six 16-byte chunks
constexpr int kUntouched = -1;

int value(int rank, int i) { return 1000 * (rank + 1) + i; }

std::vector<int> block_of(int rank, int ints) {
  std::vector<int> v(static_cast<std::size_t>(ints));
  for (int i = 0; i < ints; ++i) v[static_cast<std::size_t>(i)] = value(rank, i);
  return v;
}

// What passing through the swapped type once does to a run of ints.
std::vector<int> swapped_pairs(std::vector<int> v) {
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) std::swap(v[i], v[i + 1]);
  return v;
}


// A blocking call, or its nonblocking form completed at once.
int completed(bool nonblocking, const std::function<int(MPI_Request*)>& call) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = call(nonblocking ? &request : nullptr);
  return rc == MPI_SUCCESS && nonblocking ? MPI_Wait(&request, MPI_STATUS_IGNORE) : rc;
}

class Suite {
 public:
  Suite(Checker& checker, MemorySpace& space) : checker_(checker), space_(space) {
    int lengths[2] = {1, 1};
    MPI_Aint displacements[2] = {4, 0};
    MPI_Type_create_hindexed(2, lengths, displacements, MPI_INT, &swapped_);
    MPI_Type_commit(&swapped_);
  }
  ~Suite() { MPI_Type_free(&swapped_); }
  Suite(const Suite&) = delete;
  Suite& operator=(const Suite&) = delete;

  void run_all() {
    for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
      for (bool nonblocking : {false, true}) {
        for (bool into_swapped : {true, false}) swapped_collectives(comm, nonblocking, into_swapped);
      }
    }
    swapped_p2p();
    bottom_collectives();
    bottom_p2p();
  }

 private:
  // One data movement: each rank's input block (2 * kPairs ints of value(rank, i)) sent as ints
  // or as the swapped type, received the other way; `expected` built from blocks swapped once.
  struct Movement {
    const char* name;
    int send_blocks;  // per rank, in blocks of 2 * kPairs ints
    int recv_blocks;
    std::function<std::vector<int>(int rank, int ranks)> send_values;
    std::function<std::vector<int>(int rank, int ranks)> expected;  // before the swap
    std::function<int(void* send, MPI_Datatype st, int sn, void* recv, MPI_Datatype rt, int rn, MPI_Comm comm,
                      MPI_Request* request)>
        call;
  };

  void swapped_collectives(MPI_Comm comm, bool nonblocking, bool into_swapped) {
    for (const Movement& m : movements()) {
      const int rank = rank_of(comm), ranks = size_of(comm);
      const int ints = 2 * kPairs;
      std::vector<int> send_values = m.send_values(rank, ranks);
      if (!into_swapped) send_values = swapped_pairs(send_values);  // sent through the type: unswapped
      SpaceBuffer<int> send(space_, send_values);
      SpaceBuffer<int> recv(space_, std::vector<int>(static_cast<std::size_t>(m.recv_blocks * ints), kUntouched));
      const MPI_Datatype st = into_swapped ? MPI_INT : swapped_;
      const MPI_Datatype rt = into_swapped ? swapped_ : MPI_INT;
      const int sn = into_swapped ? ints : kPairs, rn = into_swapped ? kPairs : ints;
      const int rc = completed(nonblocking, [&](MPI_Request* request) {
        return m.call(send.data(), st, sn, recv.data(), rt, rn, comm, request);
      });
      std::vector<int> expected = m.expected(rank, ranks);
      if (into_swapped) expected = swapped_pairs(expected);
      const std::vector<int> got = recv.download();
      checker_.expect_equal(std::string(m.name) + (nonblocking ? " nonblocking" : "") +
                                (comm == MPI_COMM_SELF ? " on MPI_COMM_SELF" : "") +
                                (into_swapped ? ", ints into the swapped type" : ", the swapped type into ints"),
                            rc, got.data(), expected.data(), expected.size());
    }
  }

  std::vector<Movement> movements() const {
    const int ints = 2 * kPairs;
    auto own = [ints](int rank, int) { return block_of(rank, ints); };
    auto all = [ints](int, int ranks) {
      std::vector<int> v;
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> b = block_of(r, ints);
        v.insert(v.end(), b.begin(), b.end());
      }
      return v;
    };
    // Alltoall input: block d of rank r holds value(r * ranks + d, i), so each block is distinct.
    auto to_each = [ints](int rank, int ranks) {
      std::vector<int> v;
      for (int d = 0; d < ranks; ++d) {
        const std::vector<int> b = block_of(rank * ranks + d, ints);
        v.insert(v.end(), b.begin(), b.end());
      }
      return v;
    };
    auto from_each = [ints](int rank, int ranks) {
      std::vector<int> v;
      for (int s = 0; s < ranks; ++s) {
        const std::vector<int> b = block_of(s * ranks + rank, ints);
        v.insert(v.end(), b.begin(), b.end());
      }
      return v;
    };
    const int n = size_of(MPI_COMM_WORLD);  // the most blocks any communicator here has
    std::vector<Movement> list;
    list.push_back({"allgather", 1, n, own, all,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      return q ? MPI_Iallgather(s, sn, st, r, rn, rt, c, q) : MPI_Allgather(s, sn, st, r, rn, rt, c);
                    }});
    list.push_back({"allgatherv", 1, n, own, all,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      std::vector<int> counts(static_cast<std::size_t>(size_of(c)), rn), displs(counts.size());
                      for (std::size_t i = 0; i < displs.size(); ++i) displs[i] = static_cast<int>(i) * rn;
                      return q ? MPI_Iallgatherv(s, sn, st, r, counts.data(), displs.data(), rt, c, q)
                               : MPI_Allgatherv(s, sn, st, r, counts.data(), displs.data(), rt, c);
                    }});
    list.push_back({"alltoall", n, n, to_each, from_each,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      return q ? MPI_Ialltoall(s, sn, st, r, rn, rt, c, q) : MPI_Alltoall(s, sn, st, r, rn, rt, c);
                    }});
    list.push_back({"alltoallv", n, n, to_each, from_each,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      const std::size_t ranks = static_cast<std::size_t>(size_of(c));
                      std::vector<int> scounts(ranks, sn), sdispls(ranks), rcounts(ranks, rn), rdispls(ranks);
                      for (std::size_t i = 0; i < ranks; ++i) {
                        sdispls[i] = static_cast<int>(i) * sn;
                        rdispls[i] = static_cast<int>(i) * rn;
                      }
                      return q ? MPI_Ialltoallv(s, scounts.data(), sdispls.data(), st, r, rcounts.data(),
                                                rdispls.data(), rt, c, q)
                               : MPI_Alltoallv(s, scounts.data(), sdispls.data(), st, r, rcounts.data(),
                                               rdispls.data(), rt, c);
                    }});
    // Rooted at 0: off the root a gather's receive side stays untouched, as a scatter's send side.
    auto gathered = [all, ints](int rank, int ranks) {
      return rank == 0 ? all(rank, ranks) : std::vector<int>(static_cast<std::size_t>(ranks * ints), kUntouched);
    };
    list.push_back({"gather", 1, n, own, gathered,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      return q ? MPI_Igather(s, sn, st, r, rn, rt, 0, c, q) : MPI_Gather(s, sn, st, r, rn, rt, 0, c);
                    }});
    list.push_back({"scatter", n, 1, all, own,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      return q ? MPI_Iscatter(s, sn, st, r, rn, rt, 0, c, q) : MPI_Scatter(s, sn, st, r, rn, rt, 0, c);
                    }});
    // Bcast: the root sends its input one way, the others receive it the other way; the root's
    // receive buffer is not the call's and stays untouched.
    auto broadcast = [ints](int rank, int) {
      return rank == 0 ? std::vector<int>(static_cast<std::size_t>(ints), kUntouched) : block_of(0, ints);
    };
    list.push_back({"bcast", 1, 1, own, broadcast,
                    [](void* s, MPI_Datatype st, int sn, void* r, MPI_Datatype rt, int rn, MPI_Comm c,
                       MPI_Request* q) {
                      const bool root = rank_of(c) == 0;
                      void* buffer = root ? s : r;
                      const MPI_Datatype t = root ? st : rt;
                      const int count = root ? sn : rn;
                      return q ? MPI_Ibcast(buffer, count, t, 0, c, q) : MPI_Bcast(buffer, count, t, 0, c);
                    }});
    return list;
  }

  // The ints of rank 0's block sent as ints, received by rank 1 as the swapped type; then back
  // from the swapped type into ints.
  void swapped_p2p() {
    if (size_of(MPI_COMM_WORLD) < 2 || rank_of(MPI_COMM_WORLD) > 1) return;
    const int rank = rank_of(MPI_COMM_WORLD), ints = 2 * kPairs;
    SpaceBuffer<int> buffer(space_, rank == 0 ? block_of(0, ints) : std::vector<int>(ints, kUntouched));
    int rc = rank == 0 ? MPI_Send(buffer.data(), ints, MPI_INT, 1, 7, MPI_COMM_WORLD)
                       : MPI_Recv(buffer.data(), kPairs, swapped_, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 1) {
      const std::vector<int> expected = swapped_pairs(block_of(0, ints)), got = buffer.download();
      checker_.expect_equal("send ints, receive the swapped type", rc, got.data(), expected.data(), expected.size());
    }
    // Rank 1 now holds the swapped ints: sent through the swapped type, rank 0 gets them in order.
    if (rank == 0) buffer.upload(std::vector<int>(ints, kUntouched));
    rc = rank == 1 ? MPI_Send(buffer.data(), kPairs, swapped_, 0, 8, MPI_COMM_WORLD)
                   : MPI_Recv(buffer.data(), ints, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) {
      const std::vector<int> expected = block_of(0, ints), got = buffer.download();
      checker_.expect_equal("send the swapped type, receive ints", rc, got.data(), expected.data(), expected.size());
    }
  }

  // `blocks` blocks of 2 * kPairs ints at the absolute address of `buffer`: one element of it
  // addresses them from MPI_BOTTOM.
  static MPI_Datatype absolute(const void* buffer, int blocks) {
    MPI_Aint address = 0;
    MPI_Get_address(buffer, &address);
    int length = blocks * 2 * kPairs;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Type_create_hindexed(1, &length, &address, MPI_INT, &type);
    MPI_Type_commit(&type);
    return type;
  }

  void bottom_collectives() {
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = rank_of(comm), ranks = size_of(comm), ints = 2 * kPairs;
    std::vector<int> every;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<int> b = block_of(r, ints);
      every.insert(every.end(), b.begin(), b.end());
    }
    SpaceBuffer<int> send(space_, block_of(rank, ints));
    MPI_Datatype send_type = absolute(send.data(), 1);
    for (bool nonblocking : {false, true}) {
      const std::string form = nonblocking ? " nonblocking" : "";
      {
        // Every rank sends from MPI_BOTTOM; the root receives into a plain device pointer.
        SpaceBuffer<int> recv(space_, std::vector<int>(every.size(), kUntouched));
        const int rc = completed(nonblocking, [&](MPI_Request* q) {
          return q ? MPI_Igather(MPI_BOTTOM, 1, send_type, recv.data(), ints, MPI_INT, 0, comm, q)
                   : MPI_Gather(MPI_BOTTOM, 1, send_type, recv.data(), ints, MPI_INT, 0, comm);
        });
        const std::vector<int> got = recv.download();
        const std::vector<int> expected = rank == 0 ? every : std::vector<int>(every.size(), kUntouched);
        checker_.expect_equal("gather from MPI_BOTTOM" + form, rc, got.data(), expected.data(), expected.size());
      }
      {
        // Both sides from MPI_BOTTOM: no buffer argument is anything but NULL.
        SpaceBuffer<int> recv(space_, std::vector<int>(every.size(), kUntouched));
        MPI_Datatype recv_block = absolute(recv.data(), 1);  // extent: one block, so block r follows
        const int rc = completed(nonblocking, [&](MPI_Request* q) {
          return q ? MPI_Iallgather(MPI_BOTTOM, 1, send_type, MPI_BOTTOM, 1, recv_block, comm, q)
                   : MPI_Allgather(MPI_BOTTOM, 1, send_type, MPI_BOTTOM, 1, recv_block, comm);
        });
        const std::vector<int> got = recv.download();
        checker_.expect_equal("allgather from and to MPI_BOTTOM" + form, rc, got.data(), every.data(), every.size());
        MPI_Type_free(&recv_block);
      }
      {
        SpaceBuffer<int> buffer(space_, rank == 0 ? block_of(0, ints) : std::vector<int>(ints, kUntouched));
        MPI_Datatype type = absolute(buffer.data(), 1);
        const int rc = completed(nonblocking, [&](MPI_Request* q) {
          return q ? MPI_Ibcast(MPI_BOTTOM, 1, type, 0, comm, q) : MPI_Bcast(MPI_BOTTOM, 1, type, 0, comm);
        });
        const std::vector<int> got = buffer.download(), expected = block_of(0, ints);
        checker_.expect_equal("bcast on MPI_BOTTOM" + form, rc, got.data(), expected.data(), expected.size());
        MPI_Type_free(&type);
      }
    }
    MPI_Type_free(&send_type);
  }

  // Rank 0 sends from MPI_BOTTOM, rank 1 receives into MPI_BOTTOM.
  void bottom_p2p() {
    if (size_of(MPI_COMM_WORLD) < 2 || rank_of(MPI_COMM_WORLD) > 1) return;
    const int rank = rank_of(MPI_COMM_WORLD), ints = 2 * kPairs;
    SpaceBuffer<int> buffer(space_, rank == 0 ? block_of(0, ints) : std::vector<int>(ints, kUntouched));
    MPI_Datatype type = absolute(buffer.data(), 1);
    const int rc = rank == 0 ? MPI_Send(MPI_BOTTOM, 1, type, 1, 9, MPI_COMM_WORLD)
                             : MPI_Recv(MPI_BOTTOM, 1, type, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 1) {
      const std::vector<int> got = buffer.download(), expected = block_of(0, ints);
      checker_.expect_equal("send and receive on MPI_BOTTOM", rc, got.data(), expected.data(), expected.size());
    }
    MPI_Type_free(&type);
  }

  Checker& checker_;
  MemorySpace& space_;
  MPI_Datatype swapped_ = MPI_DATATYPE_NULL;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string space_name = "host";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--space") == 0) space_name = argv[i + 1];
  }
  int exit_code = mcrp_test::kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = mcrp_test::make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      Checker checker;
      Suite(checker, *space).run_all();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_datatype_placement --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
