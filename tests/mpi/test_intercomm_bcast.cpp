// Bcast on an intercommunicator in every form: blocking, nonblocking and persistent, int and _c,
// every root of both groups, 0 B to 1 MiB, persistent requests started three times with new data
// each time, two bcasts in opposite directions in flight at once (completed in reverse order, and
// persistent ones started together), and a strided datatype whose gaps must stay untouched.
//
// MPICH 4.0.2 and both wheels of tests/abi deliver nothing from a nonblocking or persistent bcast
// whose root is not rank 0 of its group (docs/base-mpi-defects.md); the library runs those itself
// (collectives/intercomm_bcast.h). Without the library such cases are skipped where a probe shows
// the defect, and with it they count as checks beyond the base MPI. Every value depends on the
// root and the round, so a receive buffer (or a staging image the library reuses) left from an
// earlier call cannot pass for this one.
//
//   --space host | fake-device | device   where the buffers live (tests/mpi/memory_spaces.h)
#include <mpi.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/check.h"
#include "tests/mpi/intercomm_ibcast_probe.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using mcrp_test::Checker;
using mcrp_test::MemorySpace;
using mcrp_test::SpaceBuffer;

enum class Form { blocking, blocking_c, nonblocking, nonblocking_c, persistent, persistent_c };
constexpr Form kForms[] = {Form::blocking,    Form::blocking_c,  Form::nonblocking,
                           Form::nonblocking_c, Form::persistent, Form::persistent_c};
const char* form_name(Form f) {
  switch (f) {
    case Form::blocking: return "Bcast";
    case Form::blocking_c: return "Bcast_c";
    case Form::nonblocking: return "Ibcast";
    case Form::nonblocking_c: return "Ibcast_c";
    case Form::persistent: return "Bcast_init";
    case Form::persistent_c: return "Bcast_init_c";
  }
  return "?";
}
bool is_persistent(Form f) { return f == Form::persistent || f == Form::persistent_c; }
bool is_blocking(Form f) { return f == Form::blocking || f == Form::blocking_c; }

// This rank's place: its group (0: even world ranks, 1: odd ones), its rank there, both groups' sizes.
struct Inter {
  MPI_Comm comm = MPI_COMM_NULL;
  int group = 0;
  int rank = 0;
  int group_size[2] = {0, 0};

  // The root argument of this rank for a bcast from rank `root` of group `root_group`.
  int root_argument(int root_group, int root) const {
    if (group != root_group) return root;
    return rank == root ? MPI_ROOT : MPI_PROC_NULL;
  }
};

// What the root of (root_group, root) sends in `round`: distinct for every root and round.
int value(int root_group, int root, int round, MPI_Count i) {
  return static_cast<int>(root_group * 1000003 + root * 10007 + round * 101 + i % 100003);
}
std::vector<int> values(int root_group, int root, int round, MPI_Count n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(root_group, root, round, i);
  return v;
}
constexpr int kUntouched = -7;

// Issues the bcast in `form`: blocking ones complete here (*request stays MPI_REQUEST_NULL);
// persistent ones are only initialised.
int issue(Form form, void* buffer, MPI_Count n, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  const int narrow = static_cast<int>(n);
  switch (form) {
    case Form::blocking: return MPI_Bcast(buffer, narrow, type, root, comm);
    case Form::blocking_c: return MPI_Bcast_c(buffer, n, type, root, comm);
    case Form::nonblocking: return MPI_Ibcast(buffer, narrow, type, root, comm, request);
    case Form::nonblocking_c: return MPI_Ibcast_c(buffer, n, type, root, comm, request);
    case Form::persistent: return MPI_Bcast_init(buffer, narrow, type, root, comm, MPI_INFO_NULL, request);
    case Form::persistent_c: return MPI_Bcast_init_c(buffer, n, type, root, comm, MPI_INFO_NULL, request);
  }
  return MPI_ERR_ARG;
}

class IntercommBcastTest {
 public:
  IntercommBcastTest(Checker& checker, MemorySpace& space, const Inter& inter, bool base_defect, bool library)
      : checker_(checker), space_(space), inter_(inter), base_defect_(base_defect), library_(library) {}

  // Every form, root and size.
  void all_roots() {
    for (Form form : kForms)
      for (int g = 0; g < 2; ++g)
        for (int root = 0; root < inter_.group_size[g]; ++root)
          for (MPI_Count n : {MPI_Count{0}, MPI_Count{1}, MPI_Count{1024}, MPI_Count{1} << 18}) one(form, g, root, n);
  }

  // Group 0's last rank and group 1's last rank broadcast at once, in flight together.
  void opposite_directions() {
    for (Form form : {Form::nonblocking, Form::persistent_c}) {
      const int root[2] = {inter_.group_size[0] - 1, inter_.group_size[1] - 1};
      if (skipped(form, root[0]) || skipped(form, root[1])) continue;
      Checker::BeyondBase beyond(checker_, beyond_base(form, root[0]) || beyond_base(form, root[1]));
      const MPI_Count n = 1000;
      SpaceBuffer<int> a(space_, static_cast<std::size_t>(n)), b(space_, static_cast<std::size_t>(n));
      SpaceBuffer<int>* buffer[2] = {&a, &b};
      MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      for (int g = 0; g < 2; ++g) {
        if (!is_persistent(form)) fill(*buffer[g], g, root[g], 0, n);  // a nonblocking call starts now
        issue(form, buffer[g]->data(), n, MPI_INT, inter_.root_argument(g, root[g]), inter_.comm, &requests[g]);
      }
      for (int round = 0; round < (is_persistent(form) ? 3 : 1); ++round) {
        if (is_persistent(form)) {
          for (int g = 0; g < 2; ++g) fill(*buffer[g], g, root[g], round, n);
          MPI_Startall(2, requests);
        }
        MPI_Request reversed[2] = {requests[1], requests[0]};
        const int rc = MPI_Waitall(2, reversed, MPI_STATUSES_IGNORE);
        requests[0] = reversed[1];
        requests[1] = reversed[0];
        const std::string what = std::string(form_name(form)) + " both directions at once round " +
                                 std::to_string(round);
        for (int g = 0; g < 2; ++g) {
          verify(what + " from group " + std::to_string(g), rc, *buffer[g], g, root[g], round, n);
        }
      }
      if (is_persistent(form)) {
        MPI_Request_free(&requests[0]);
        MPI_Request_free(&requests[1]);
      }
    }
  }

  // Every other int of the buffer, the gaps untouched, from the last rank of group 0.
  void strided() {
    const int root = inter_.group_size[0] - 1;
    const int n = 300;
    MPI_Datatype every_other = MPI_DATATYPE_NULL;
    MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (Form form : {Form::nonblocking_c, Form::persistent}) {
      if (skipped(form, root)) continue;
      Checker::BeyondBase beyond(checker_, beyond_base(form, root));
      SpaceBuffer<int> buffer(space_, 2 * n);
      MPI_Request request = MPI_REQUEST_NULL;
      const int root_argument = inter_.root_argument(0, root);
      // Receivers start from kUntouched and must get the strided elements only; the root's gaps
      // hold data too, which must not travel.
      auto fill_strided = [&](int round) {
        const std::vector<int> sent = values(0, root, round, 2 * n);
        buffer.upload(root_argument >= 0 ? std::vector<int>(2 * n, kUntouched) : sent);
        std::vector<int> expected = sent;
        if (root_argument >= 0) {
          for (int i = 1; i < 2 * n; i += 2) expected[static_cast<std::size_t>(i)] = kUntouched;
        }
        return expected;
      };
      std::vector<int> expected = fill_strided(0);
      int rc = issue(form, buffer.data(), 1, every_other, root_argument, inter_.comm, &request);
      for (int round = 0; round < (is_persistent(form) ? 2 : 1); ++round) {
        if (round > 0) expected = fill_strided(round);
        if (is_persistent(form) && rc == MPI_SUCCESS) rc = MPI_Start(&request);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
        const std::vector<int> got = buffer.download();
        checker_.expect_equal(std::string(form_name(form)) + " strided round " + std::to_string(round), rc, got.data(),
                              expected.data(), got.size());
      }
      if (is_persistent(form)) MPI_Request_free(&request);
    }
    MPI_Type_free(&every_other);
  }

 private:
  // Without the library, where the base MPI drops the data (skipped, with the reason).
  bool skipped(Form form, int root) {
    if (!beyond_base(form, root) || library_) return false;
    checker_.skip("base MPI defect: nonblocking and persistent bcast on an intercommunicator deliver nothing "
                  "when the root is not rank 0 of its group");
    return true;
  }
  bool beyond_base(Form form, int root) const { return base_defect_ && !is_blocking(form) && root != 0; }

  // The root's buffer holds this round's data, the others' kUntouched.
  void fill(SpaceBuffer<int>& buffer, int root_group, int root, int round, MPI_Count n) {
    const bool sends = inter_.root_argument(root_group, root) == MPI_ROOT;
    buffer.upload(sends ? values(root_group, root, round, n)
                        : std::vector<int>(static_cast<std::size_t>(n), kUntouched));
  }
  // Receivers hold the root's data; the root and its group's other ranks kept theirs.
  void verify(const std::string& what, int rc, const SpaceBuffer<int>& buffer, int root_group, int root, int round,
              MPI_Count n) {
    const int argument = inter_.root_argument(root_group, root);
    const std::vector<int> expected = argument == MPI_PROC_NULL
                                          ? std::vector<int>(static_cast<std::size_t>(n), kUntouched)
                                          : values(root_group, root, round, n);
    const std::vector<int> got = buffer.download();
    const char* role = argument == MPI_ROOT ? "root" : argument == MPI_PROC_NULL ? "root's group" : "receiver";
    checker_.expect_equal(what + " (" + role + ")", rc, got.data(), expected.data(), got.size());
  }

  void one(Form form, int root_group, int root, MPI_Count n) {
    if (skipped(form, root)) return;
    Checker::BeyondBase beyond(checker_, beyond_base(form, root));
    SpaceBuffer<int> buffer(space_, static_cast<std::size_t>(n));
    MPI_Request request = MPI_REQUEST_NULL;
    const std::string what = std::string(form_name(form)) + " root g" + std::to_string(root_group) + ":" +
                             std::to_string(root) + " n=" + std::to_string(n);
    const int argument = inter_.root_argument(root_group, root);
    if (!is_persistent(form)) fill(buffer, root_group, root, 0, n);
    int rc = issue(form, buffer.data(), n, MPI_INT, argument, inter_.comm, &request);
    for (int round = 0; round < (is_persistent(form) ? 3 : 1); ++round) {
      if (is_persistent(form)) {
        fill(buffer, root_group, root, round, n);
        if (rc == MPI_SUCCESS) rc = MPI_Start(&request);
      }
      if (rc == MPI_SUCCESS && !is_blocking(form)) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
      verify(what + " round " + std::to_string(round), rc, buffer, root_group, root, round, n);
    }
    if (is_persistent(form) && request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  }

  Checker& checker_;
  MemorySpace& space_;
  const Inter& inter_;
  bool base_defect_;
  bool library_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string space_name = "host";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--space") == 0) space_name = argv[i + 1];
  }
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int exit_code = mcrp_test::kSkipExitCode;
  if (world_size < 2) {
    if (world_rank == 0) std::printf("SKIPPED: an intercommunicator needs 2 ranks or more\n");
  } else if (std::unique_ptr<MemorySpace> space = mcrp_test::make_memory_space(space_name, MPI_COMM_WORLD)) {
    Inter inter;
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - world_rank % 2, 31, &inter.comm);
    inter.group = world_rank % 2;
    MPI_Comm_rank(half, &inter.rank);
    MPI_Comm_size(half, &inter.group_size[inter.group]);
    MPI_Comm_remote_size(inter.comm, &inter.group_size[1 - inter.group]);
    const bool base_defect =
        mcrp_test::base_ibcast_drops_nonzero_root(inter.comm, inter.group, inter.rank, inter.group_size[0]);
    const bool library = MPIX_Query_cuda_support() == 1;  // the library answers 1, MPICH 0
    if (world_rank == 0) {
      std::printf("base MPI %s the nonblocking bcast from rank 1 of a group; library %s\n",
                  base_defect ? "drops" : "delivers", library ? "loaded" : "absent");
    }
    Checker checker;
    IntercommBcastTest test(checker, *space, inter, base_defect, library);
    test.all_roots();
    test.opposite_directions();
    test.strided();
    MPI_Comm_free(&inter.comm);
    MPI_Comm_free(&half);
    exit_code = checker.finish(MPI_COMM_WORLD, ("test_intercomm_bcast --space " + space_name).c_str());
  }
  MPI_Finalize();
  return exit_code;
}
