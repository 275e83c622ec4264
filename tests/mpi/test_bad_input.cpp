// Issue 13, item 1: bad input on every entry point the library overrides -- all 93 collective entry
// points (blocking, nonblocking, persistent; int and _c), all point-to-point ones (pmpi/p2p.def) and
// the lifecycle, communicator, request, probe and error entry points of pmpi/ -- one mistake at a
// time (tests/mpi/bad_inputs.h), made alike by every rank (point-to-point: with MPI_PROC_NULL
// partners, so nobody waits). Each call must return the expected MPI error class through the
// communicator's error handler (a counting handler that returns, so MPI_ERRORS_RETURN semantics;
// nothing may reach MPI_COMM_WORLD's handler for an error on another communicator), write nothing
// outside its buffers (guard bytes around every buffer, tests/mpi/guarded_space.h), and leave the
// communicator usable (a correct allreduce after the forms of each entry point and mistake, and
// after every lifecycle case). Where MPICH 4.0.2 itself crashes or
// does not report the mistake, the case is the library's alone: run as a check beyond the base MPI,
// skipped without the library. The error class is in each check's name, so the comparison mode
// (tests/compare) holds the library to the base MPI's classes.
//
//   --space host|fake-device   where the buffers live (fake-device: MCRPMPI_FAKE_DEVICE=1, CPU CI)
//   --only, --trace, --run-base-defects: tests/mpi/case_filter.h
#include <mpi.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/mpi/bad_inputs.h"
#include "tests/mpi/case_filter.h"
#include "tests/mpi/check.h"
#include "tests/mpi/command_line.h"
#include "tests/mpi/guarded_space.h"
#include "tests/mpi/memory_spaces.h"

namespace {

using namespace mcrp_test;

// ---- error handlers that count --------------------------------------------------------------------

struct HandlerCounts {
  int world = 0;  // calls of MPI_COMM_WORLD's handler
  int other = 0;  // calls of the test communicators' handler
};
HandlerCounts g_handled;

void counting_handler(MPI_Comm* comm, int*, ...) {
  if (*comm == MPI_COMM_WORLD) ++g_handled.world;
  else ++g_handled.other;
}

// Which handler an error must go through: the call's communicator, or MPI_COMM_WORLD's (no valid
// communicator: MPI_COMM_NULL, a freed one, requests, MPI_Init, queries).
enum class Target { comm, world };

// ---- one case --------------------------------------------------------------------------------------

// Cases tried and checked per entry-point family, for the summary.
struct Tally {
  long tried = 0;
  long with_base = 0;     // the base MPI reports the same class (compared in the comparison mode)
  long library_only = 0;  // MPICH 4.0.2 crashes or does not report it
};

class Runner {
 public:
  Runner(Checker& checker, GuardedSpace& space, const BadComm& comm, int argc, char** argv)
      : checker_(checker), space_(space), comm_(comm), filter_(checker, argc, argv) {}

  bool wanted(const std::string& name) const { return filter_.wanted(name); }

  // Runs `call` (which returns an MPI code) and makes the case's checks.
  void run(const std::string& family, const std::string& name, const Expectation& e, Target target,
           const std::function<int()>& call) {
    if (!filter_.run(name, e.base_defect)) return;
    Tally& tally = tallies_[family];
    ++tally.tried;
    ++(e.base_defect != nullptr ? tally.library_only : tally.with_base);
    g_handled = HandlerCounts{};
    const int rc = call();
    const HandlerCounts handled = g_handled;
    Checker::BeyondBase beyond(checker_, e.base_defect != nullptr);
    int error_class = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &length);
    const std::string expected = " class=" + std::to_string(e.error_class);
    checker_.check(error_class == e.error_class, name + expected + ": got class " + std::to_string(error_class) +
                                                     " (" + text + ")");
    bool handler_ok = true;
    if (e.error_class == MPI_SUCCESS) {
      handler_ok = handled.world == 0 && handled.other == 0;
    } else if (target == Target::comm) {
      handler_ok = handled.other >= 1 && handled.world == 0;
    } else {
      handler_ok = handled.world >= 1 && handled.other == 0;
    }
    checker_.check(handler_ok, name + expected + " error handler: communicator's called " +
                                   std::to_string(handled.other) + " times, MPI_COMM_WORLD's " +
                                   std::to_string(handled.world));
    checker_.check(space_.intact(), name + expected + " guard bytes: a write outside the buffers");
  }

  // A correct allreduce on the communicator (in the space under test) gives the right sum. Made
  // alike with and without the library (the comparison mode compares it), whatever was skipped.
  void check_usable(const std::string& after, MPI_Comm comm) {
    SpaceBuffer<int> in(space_, std::vector<int>{1});
    SpaceBuffer<int> out(space_, std::vector<int>{0});
    const int rc = MPI_Allreduce(in.data(), out.data(), 1, MPI_INT, MPI_SUM, comm);
    int size = 0;
    MPI_Comm_size(comm, &size);
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter != 0) MPI_Comm_remote_size(comm, &size);
    const int expected = size;
    checker_.expect_equal(after + " usable afterwards", rc, out.download().data(), &expected, 1);
  }

  void print_summary() const {
    if (comm_.rank != 0) return;
    for (const auto& [family, t] : tallies_) {
      std::printf("bad input, %s: %ld cases a rank (%ld with the base MPI's class, %ld library-only)\n",
                  family.c_str(), t.tried, t.with_base, t.library_only);
    }
  }

 private:
  Checker& checker_;
  GuardedSpace& space_;
  const BadComm& comm_;
  CaseFilter filter_;
  std::map<std::string, Tally> tallies_;
};

// A communicator freed just now: its handle is stale (made per case, so that no later
// communicator can reuse the handle while a case holds it).
MPI_Comm freed_dup(MPI_Comm of) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(of, &comm);
  const MPI_Comm stale = comm;
  MPI_Comm_free(&comm);
  return stale;
}

Target target_of(Mistake m) { return m == Mistake::comm_null || m == Mistake::freed_comm ? Target::world : Target::comm; }

// ---- the families ---------------------------------------------------------------------------------

void collectives(Runner& runner, const BadComm& comm, const BadTypes& types, GuardedSpace& space) {
  for (Coll coll : kAllColls)
    for (Mistake m : kAllMistakes) {
      const std::string entry = std::string("collective ") + coll_name(coll);
      const std::string what = std::string(mistake_name(m)) + (comm.inter ? " intercomm" : "");
      bool applicable = false;
      for (CountForm counts : kCountForms)
        for (CallForm form : kCallForms) {
          const std::string name = entry + " " + call_form_name(form) + " " + form_name(counts) + " " + what;
          if (!runner.wanted(name)) continue;
          const MPI_Comm freed = m == Mistake::freed_comm ? freed_dup(comm.comm) : MPI_COMM_NULL;
          const std::unique_ptr<BadCall> call = bad_collective(coll, counts, m, comm, freed, types, space);
          if (!call) continue;
          applicable = true;
          const int array_size = comm.peers > comm.size ? comm.peers : comm.size;
          runner.run("collectives", name, call->expect, target_of(m),
                     [&] { return invoke(coll, form, counts, call->coll, array_size); });
        }
      if (applicable) runner.check_usable(entry + " " + what, comm.comm);
    }
}

void point_to_point(Runner& runner, const BadComm& comm, const BadTypes& types, GuardedSpace& space) {
  for (int i = 0; i <= static_cast<int>(P2POp::Mrecv); ++i) {
    const auto op = static_cast<P2POp>(i);
    for (Mistake m : kAllMistakes) {
      const std::string entry = std::string("p2p ") + p2p_op_name(op) + " " + mistake_name(m);
      bool applicable = false;
      for (CountForm counts : kCountForms)
        for (CallForm form : kCallForms)
          for (bool self_peer : {false, true}) {
            if (form == CallForm::persistent && !has_persistent_form(op)) continue;
            const std::string name = std::string("p2p ") + p2p_op_name(op) + " " + call_form_name(form) + " " +
                                     form_name(counts) + " " + mistake_name(m) + (self_peer ? " peer=self" : "");
            if (!runner.wanted(name)) continue;
            const MPI_Comm freed = m == Mistake::freed_comm ? freed_dup(comm.comm) : MPI_COMM_NULL;
            const std::unique_ptr<BadCall> call = bad_p2p(op, counts, m, self_peer, comm, freed, types, space);
            if (!call) continue;
            applicable = true;
            const Target target = op == P2POp::Mrecv ? Target::world : target_of(m);  // Mrecv has no communicator
            runner.run("point-to-point", name, call->expect, target, [&] {
              MPI_Status status;
              Started started = start_p2p(op, form, counts, call->p2p, &status);
              return finish_p2p(started, &status);
            });
          }
      if (applicable) runner.check_usable(entry, comm.comm);
    }
  }
}

struct LifecycleCase {
  const char* name;
  int error_class;
  Target target;
  const char* base_defect;
  std::function<int()> call;
};

void lifecycle(Runner& runner, const BadComm& comm) {
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  int flag = 0, index = 0, value = 0;
  const MPI_Comm c = comm.comm;
  const int bad_rank = comm.size;
  const std::vector<LifecycleCase> cases = {
      {"MPI_Init again", MPI_ERR_OTHER, Target::world, nullptr, [&] { return MPI_Init(nullptr, nullptr); }},
      {"MPI_Init_thread again", MPI_ERR_OTHER, Target::world, nullptr,
       [&] { return MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &value); }},
      {"MPI_Comm_dup MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr, [&] { return MPI_Comm_dup(MPI_COMM_NULL, &out); }},
      {"MPI_Comm_dup freed-comm", MPI_ERR_COMM, Target::world, nullptr, [&] { return MPI_Comm_dup(freed_dup(c), &out); }},
      {"MPI_Comm_dup null-newcomm", MPI_ERR_ARG, Target::comm, nullptr, [&] { return MPI_Comm_dup(c, nullptr); }},
      {"MPI_Comm_dup_with_info MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_dup_with_info(MPI_COMM_NULL, MPI_INFO_NULL, &out); }},
      {"MPI_Comm_set_info MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_set_info(MPI_COMM_NULL, MPI_INFO_NULL); }},
      {"MPI_Comm_split MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_split(MPI_COMM_NULL, 0, 0, &out); }},
      {"MPI_Comm_split_type MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_split_type(MPI_COMM_NULL, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out); }},
      {"MPI_Dist_graph_create_adjacent MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] {
         return MPI_Dist_graph_create_adjacent(MPI_COMM_NULL, 0, nullptr, MPI_UNWEIGHTED, 0, nullptr, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &out);
       }},
      {"MPI_Comm_get_info MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] {
         MPI_Info info = MPI_INFO_NULL;
         return MPI_Comm_get_info(MPI_COMM_NULL, &info);
       }},
      {"MPI_Comm_get_info null-info", MPI_ERR_ARG, Target::comm, nullptr, [&] { return MPI_Comm_get_info(c, nullptr); }},
      {"MPI_Comm_create MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_create(MPI_COMM_NULL, world_group, &out); }},
      {"MPI_Comm_create MPI_GROUP_NULL", MPI_ERR_GROUP, Target::world, nullptr,
       [&] { return MPI_Comm_create(c, MPI_GROUP_NULL, &out); }},
      {"MPI_Comm_create_group MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Comm_create_group(MPI_COMM_NULL, world_group, 0, &out); }},
      {"MPI_Comm_free MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { out = MPI_COMM_NULL; return MPI_Comm_free(&out); }},
      {"MPI_Comm_free freed-comm", MPI_ERR_COMM, Target::world, nullptr,
       [&] { out = freed_dup(c); return MPI_Comm_free(&out); }},
      {"MPI_Comm_disconnect MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { out = MPI_COMM_NULL; return MPI_Comm_disconnect(&out); }},
      {"MPI_Start MPI_REQUEST_NULL", MPI_ERR_REQUEST, Target::world, nullptr,
       [&] { request = MPI_REQUEST_NULL; return MPI_Start(&request); }},
      {"MPI_Startall count=-1", MPI_ERR_COUNT, Target::world, nullptr, [&] { return MPI_Startall(-1, &request); }},
      {"MPI_Request_free MPI_REQUEST_NULL", MPI_ERR_REQUEST, Target::world, nullptr,
       [&] { request = MPI_REQUEST_NULL; return MPI_Request_free(&request); }},
      {"MPI_Wait null-request", MPI_ERR_ARG, Target::world, nullptr, [&] { return MPI_Wait(nullptr, &status); }},
      {"MPI_Waitall count=-1", MPI_ERR_COUNT, Target::world, nullptr,
       [&] { return MPI_Waitall(-1, &request, MPI_STATUSES_IGNORE); }},
      {"MPI_Waitany null-index", MPI_ERR_ARG, Target::world, nullptr,
       [&] { request = MPI_REQUEST_NULL; return MPI_Waitany(1, &request, nullptr, &status); }},
      {"MPI_Waitsome count=-1", MPI_ERR_COUNT, Target::world, nullptr,
       [&] { return MPI_Waitsome(-1, &request, &index, &index, MPI_STATUSES_IGNORE); }},
      {"MPI_Test null-flag", MPI_ERR_ARG, Target::world, nullptr,
       [&] { request = MPI_REQUEST_NULL; return MPI_Test(&request, nullptr, &status); }},
      {"MPI_Testall count=-1", MPI_ERR_COUNT, Target::world, nullptr,
       [&] { return MPI_Testall(-1, &request, &flag, MPI_STATUSES_IGNORE); }},
      {"MPI_Testany null-flag", MPI_ERR_ARG, Target::world, nullptr,
       [&] { request = MPI_REQUEST_NULL; return MPI_Testany(1, &request, &index, nullptr, &status); }},
      {"MPI_Testsome count=-1", MPI_ERR_COUNT, Target::world, nullptr,
       [&] { return MPI_Testsome(-1, &request, &index, &index, MPI_STATUSES_IGNORE); }},
      {"MPI_Request_get_status null-flag", MPI_ERR_ARG, Target::world, nullptr,
       [&] { return MPI_Request_get_status(MPI_REQUEST_NULL, nullptr, &status); }},
      {"MPI_Probe rank=size", MPI_ERR_RANK, Target::comm, nullptr, [&] { return MPI_Probe(bad_rank, 0, c, &status); }},
      {"MPI_Iprobe tag=-5", MPI_ERR_TAG, Target::comm, nullptr,
       [&] { return MPI_Iprobe(MPI_PROC_NULL, -5, c, &flag, &status); }},
      {"MPI_Mprobe MPI_COMM_NULL", MPI_ERR_COMM, Target::world, nullptr,
       [&] { return MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_NULL, &message, &status); }},
      {"MPI_Improbe rank=size", MPI_ERR_RANK, Target::comm, nullptr,
       [&] { return MPI_Improbe(bad_rank, 0, c, &flag, &message, &status); }},
      {"MPIX_GPU_query_support null-result", MPI_ERR_ARG, Target::world, nullptr,
       [&] { return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, nullptr); }},
  };
  for (const LifecycleCase& lc : cases) {
    Expectation e;
    e.applicable = true;
    e.error_class = lc.error_class;
    e.base_defect = lc.base_defect;
    const std::string name = std::string("lifecycle ") + lc.name;
    if (!runner.wanted(name)) continue;
    runner.run("lifecycle", name, e, lc.target, lc.call);
    runner.check_usable(name, c);
  }
  MPI_Group_free(&world_group);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(counting_handler, &counting);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting);
  const std::string space_name = option(argc, argv, "--space", "host");
  int exit_code = kSkipExitCode;
  {
    std::unique_ptr<MemorySpace> inner = make_memory_space(space_name, MPI_COMM_WORLD);
    if (inner) {
      GuardedSpace space(*inner);
      Checker checker;
      BadTypes types;
      BadComm intra;
      MPI_Comm_dup(MPI_COMM_WORLD, &intra.comm);
      MPI_Comm_set_errhandler(intra.comm, counting);
      MPI_Comm_rank(intra.comm, &intra.rank);
      MPI_Comm_size(intra.comm, &intra.size);
      intra.peers = intra.size;
      Runner runner(checker, space, intra, argc, argv);
      collectives(runner, intra, types, space);
      if (intra.size > 1) {
        // Even and odd world ranks, each half's rank 0 the leader.
        MPI_Comm half = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, intra.rank % 2, intra.rank, &half);
        BadComm inter;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - intra.rank % 2, 71, &inter.comm);
        MPI_Comm_set_errhandler(inter.comm, counting);
        inter.inter = true;
        MPI_Comm_rank(inter.comm, &inter.rank);
        MPI_Comm_size(inter.comm, &inter.size);
        MPI_Comm_remote_size(inter.comm, &inter.peers);
        collectives(runner, inter, types, space);
        MPI_Comm_free(&inter.comm);
        MPI_Comm_free(&half);
      }
      point_to_point(runner, intra, types, space);
      lifecycle(runner, intra);
      runner.print_summary();
      exit_code = checker.finish(MPI_COMM_WORLD, ("test_bad_input --space " + space_name).c_str());
      MPI_Comm_free(&intra.comm);
    }
  }
  MPI_Errhandler_free(&counting);
  MPI_Finalize();
  return exit_code;
}
