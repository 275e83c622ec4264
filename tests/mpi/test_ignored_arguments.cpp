// Issue 16: valid calls whose insignificant arguments hold garbage must work. For every collective
// entry point (blocking, nonblocking, persistent; int and _c), on COMM_WORLD, COMM_SELF, an
// odd/even split and an intercommunicator, with every root and with and without MPI_IN_PLACE, each
// rank passes -1 counts, MPI_DATATYPE_NULL, null arrays and a poison pointer (each case once more
// with NULL buffers and plausible counts) wherever the standard says the argument is ignored on
// that rank, and every significant output is compared with a locally computed reference. The
// significant arrays are dropped as soon as a nonblocking call or a persistent init returns
// (tests/mpi/entry_points.h), as mpi4py drops them. Plain MPICH passes it (one case skipped on
// MPICH 4.0, tests/mpi/base_mpi_quirks.h); so must the library, linked or preloaded.
//
//   --space host         host buffers (default)
//   --space fake-device  the library's fake device memory (MCRPMPI_FAKE_DEVICE=1; CPU CI)
//   --space device       CUDA device memory (GPU machine; exits 77 without a device)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/base_mpi_quirks.h"
#include "tests/mpi/check.h"
#include "tests/mpi/entry_points.h"
#include "tests/mpi/ignored_arguments.h"
#include "tests/mpi/intercomm_ibcast_probe.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

CaseComm describe(MPI_Comm comm, const char* name) {
  CaseComm c;
  c.comm = comm;
  c.name = name;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  c.inter = inter != 0;
  c.peers = c.size;
  if (c.inter) MPI_Comm_remote_size(comm, &c.peers);
  return c;
}

// World, self, an odd/even split, and (2 ranks and more) an intercommunicator between the even and
// the odd world ranks.
class Comms {
 public:
  Comms() {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity_);
    all_ = {describe(MPI_COMM_WORLD, "world"), describe(MPI_COMM_SELF, "self"), describe(parity_, "split-parity")};
    if (size > 1) {
      // Local leader: rank 0 of each half; the remote leader is world rank 0 or 1.
      MPI_Intercomm_create(parity_, 0, MPI_COMM_WORLD, 1 - rank % 2, 77, &inter_);
      all_.push_back(describe(inter_, "inter"));
      all_.back().group = rank % 2;
      const CaseComm& c = all_.back();
      const int group0_size = c.group == 0 ? c.size : c.peers;
      ibcast_drops_nonzero_root_ = base_ibcast_drops_nonzero_root(c.comm, c.group, c.rank, group0_size);
    }
  }
  // The base MPI's intercommunicator bcast defect (tests/mpi/intercomm_ibcast_probe.h), probed on
  // this very intercommunicator.
  bool ibcast_drops_nonzero_root() const { return ibcast_drops_nonzero_root_; }
  ~Comms() {
    if (inter_ != MPI_COMM_NULL) MPI_Comm_free(&inter_);
    MPI_Comm_free(&parity_);
  }
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  const std::vector<CaseComm>& all() const { return all_; }

 private:
  MPI_Comm parity_ = MPI_COMM_NULL;
  MPI_Comm inter_ = MPI_COMM_NULL;
  std::vector<CaseComm> all_;
  bool ibcast_drops_nonzero_root_ = false;

};

// Every (root group, root) pair: each rank of the communicator (each rank of each group).
std::vector<Variant> roots_of(const CaseComm& c) {
  std::vector<Variant> roots;
  if (!c.inter) {
    for (int r = 0; r < c.size; ++r) roots.push_back(Variant{0, r, false, 0});
    return roots;
  }
  const int group_size[2] = {c.group == 0 ? c.size : c.peers, c.group == 1 ? c.size : c.peers};
  for (int g = 0; g < 2; ++g)
    for (int r = 0; r < group_size[g]; ++r) roots.push_back(Variant{g, r, false, 0});
  return roots;
}

std::string case_name(Coll coll, CallForm form, CountForm counts, const CaseComm& c, const Variant& v,
                      const Case& built) {
  std::string name = std::string(coll_name(coll)) + " " + call_form_name(form) + " " + form_name(counts) +
                     " comm=" + c.name + " n=" + std::to_string(v.n) + " root=";
  name += c.inter ? "g" + std::to_string(v.root_group) + ":" + std::to_string(v.root) : std::to_string(v.root);
  if (v.in_place) name += " in-place";
  if (v.null_buffers) name += " null-buffers";
  name += " (rank " + std::to_string(c.rank) + (c.inter ? " of g" + std::to_string(c.group) : "") + ", garbage: " +
          (built.description.empty() ? "none" : built.description) + ")";
  return name;
}

void run_case(Checker& checker, MemorySpace& space, Coll coll, CallForm form, CountForm counts, const CaseComm& c,
              const Variant& v, bool ibcast_drops_nonzero_root, const BaseMpiQuirks& quirks) {
  const std::unique_ptr<Case> built = build_case(coll, c, v, space);
  if (!built->applicable) return;
  // The library replaces these bcasts (collectives/intercomm_bcast.h) and gives the base MPI a
  // stand-in for the reduce's null send buffer at MPI_ROOT (collectives/base_call.h): checks beyond
  // the base MPI. Skipped on every rank of the case, so that none waits for a rank that skips.
  const bool base_drops_it =
      ibcast_drops_nonzero_root && coll == Coll::Bcast && form != CallForm::blocking && c.inter && v.root != 0;
  const bool base_rejects_it =
      quirks.intercomm_reduce_rejects_null_root_sendbuf && coll == Coll::Reduce && c.inter && v.null_buffers;
  if (base_drops_it && !quirks.library_present) {
    checker.skip("base MPI defect: nonblocking/persistent bcast on an intercommunicator ignores a root other "
                 "than rank 0 of its group");
    return;
  }
  if (base_rejects_it && !quirks.library_present) {
    checker.skip("base MPI defect: reduce on an intercommunicator rejects a null send buffer at MPI_ROOT");
    return;
  }
  Checker::BeyondBase beyond(checker, base_drops_it || base_rejects_it);
  const std::string name = case_name(coll, form, counts, c, v, *built);
  static const bool trace = std::getenv("MCRP_TEST_TRACE") != nullptr;
  if (trace) std::fprintf(stderr, "%s\n", name.c_str());
  const int rc = invoke(coll, form, counts, built->args, c.peers > c.size ? c.peers : c.size);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    PMPI_Error_string(rc, text, &length);
    checker.check(false, name + ": returned error " + std::to_string(rc) + " (" + text + ")");
    return;
  }
  for (std::size_t k = 0; k < built->outputs.size(); ++k) {
    const CheckedBuffer& out = built->outputs[k];
    const std::vector<int> got = out.buffer->download();
    checker.expect_equal(name + " output " + std::to_string(k), MPI_SUCCESS, got.data(), out.expected.data(),
                         out.checked);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::string space_name = "host";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--space") == 0) space_name = argv[i + 1];
  }
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> space = make_memory_space(space_name, MPI_COMM_WORLD);
    if (space) {
      Checker checker;
      Comms comms;
      const BaseMpiQuirks quirks = BaseMpiQuirks::detect();
      for (const CaseComm& c : comms.all()) {
        for (Coll coll : kAllColls)
          for (Variant v : roots_of(c))
            for (bool in_place : {false, true})
              for (MPI_Count n : {MPI_Count{0}, MPI_Count{3}})
                for (bool null_buffers : {false, true}) {
                  v.in_place = in_place;
                  v.n = n;
                  v.null_buffers = null_buffers;
                  for (CallForm form : kCallForms)
                    for (CountForm counts : kCountForms)
                      run_case(checker, *space, coll, form, counts, c, v, comms.ibcast_drops_nonzero_root(), quirks);
                }
      }
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_ignored_arguments --space " + space_name).c_str());
    }
  }
  MPI_Finalize();
  return exit_code;
}
