// Lifecycle entry points with the library present: MPI_Init / MPI_Init_thread (the provided level
// passes through), attribute caching with user copy and delete callbacks across MPI_Comm_dup,
// MPI_Comm_free, MPI_Comm_disconnect and MPI_Finalize (a COMM_SELF attribute is deleted there), the
// MPIX CUDA-support queries and MPI 4.1's memory allocation kinds of communicators, and collectives
// from two threads on two communicators under MPI_THREAD_MULTIPLE (Horovod's background thread does
// this).
//
//   test_lifecycle --init=plain|thread --expect-cuda-support=0|1
// 1 is what the library answers; 0 is what the base MPICH says when the library is absent.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/mpi/alloc_kinds_info.h"
#include "tests/mpi/check.h"

namespace {

using mcrp_test::Checker;

// What the attribute callbacks saw; the test compares it with what it did.
struct CallbackLog {
  int copies = 0;
  int deletes = 0;
  int wrong_arguments = 0;  // a callback got an unexpected extra_state or attribute value
};
CallbackLog g_log;
int g_extra_state = 0;                 // its address is the keyval's extra_state
int g_attr_value = 0;                  // its address is the attribute value set by the test
int g_attr_copy = 0;                   // its address is what the copy callback hands the new comm
CallbackLog g_self_log;                // the COMM_SELF attribute, deleted inside MPI_Finalize

int copy_attr(MPI_Comm, int, void* extra, void* value_in, void* value_out, int* flag) {
  ++g_log.copies;
  if (extra != &g_extra_state || value_in != &g_attr_value) ++g_log.wrong_arguments;
  *static_cast<void**>(value_out) = &g_attr_copy;
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_attr(MPI_Comm, int, void* value, void* extra) {
  ++g_log.deletes;
  if (extra != &g_extra_state || (value != &g_attr_value && value != &g_attr_copy)) ++g_log.wrong_arguments;
  return MPI_SUCCESS;
}

int delete_self_attr(MPI_Comm comm, int, void* value, void*) {
  ++g_self_log.deletes;
  if (comm != MPI_COMM_SELF || value != &g_attr_value) ++g_self_log.wrong_arguments;
  return MPI_SUCCESS;
}

struct Options {
  bool init_thread = true;
  int expect_cuda_support = 1;
};

bool parse(int argc, char** argv, Options* opts) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--init=plain") {
      opts->init_thread = false;
    } else if (arg == "--init=thread") {
      opts->init_thread = true;
    } else if (arg.rfind("--expect-cuda-support=", 0) == 0) {
      opts->expect_cuda_support = std::atoi(arg.c_str() + std::strlen("--expect-cuda-support="));
    } else {
      std::fprintf(stderr, "usage: %s --init=plain|thread --expect-cuda-support=0|1 (bad: %s)\n", argv[0],
                   arg.c_str());
      return false;
    }
  }
  return true;
}

void check_init(Checker& checker, const Options& opts, int provided) {
  int initialized = 0, level = -1;
  MPI_Initialized(&initialized);
  checker.check(initialized == 1, "MPI_Initialized after init");
  MPI_Query_thread(&level);
  if (opts.init_thread) {
    checker.check(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread(MULTIPLE) provides MULTIPLE, got " +
                                                       std::to_string(provided));
    checker.check(level == provided, "MPI_Query_thread matches provided, got " + std::to_string(level));
  }
}

void check_gpu_queries(Checker& checker, const Options& opts) {
  const int cuda = MPIX_Query_cuda_support();
  checker.check(cuda == opts.expect_cuda_support, "MPIX_Query_cuda_support() expected " +
                                                      std::to_string(opts.expect_cuda_support) + " got " +
                                                      std::to_string(cuda));
  int supported = -1;
  int rc = MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported);
  checker.check(rc == MPI_SUCCESS && supported == opts.expect_cuda_support,
                "MPIX_GPU_query_support(CUDA) expected " + std::to_string(opts.expect_cuda_support) + " got " +
                    std::to_string(supported) + " rc " + std::to_string(rc));
  // Other GPU kinds are the base MPI's answer, unchanged.
  int base = -1;
  supported = -1;
  PMPIX_GPU_query_support(MPIX_GPU_SUPPORT_ZE, &base);
  rc = MPIX_GPU_query_support(MPIX_GPU_SUPPORT_ZE, &supported);
  checker.check(rc == MPI_SUCCESS && supported == base,
                "MPIX_GPU_query_support(ZE) passes through: base " + std::to_string(base) + " got " +
                    std::to_string(supported));
}

// MPI 4.1's `mpi_memory_alloc_kinds` on MPI_COMM_WORLD and a duplicate: the library lists "cuda"
// once, beside the base MPI's "mpi" and "system" (MPI 4.1's default when the base predates the key,
// as MPICH 4.0.2 does); without the library no "cuda".
void check_alloc_kinds(Checker& checker, const Options& opts) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const std::pair<const char*, MPI_Comm> comms[] = {{"MPI_COMM_WORLD", MPI_COMM_WORLD}, {"a duplicate", dup}};
  for (const auto& [name, comm] : comms) {
    const std::vector<std::string> kinds = mcrp_test::comm_alloc_kinds(comm);
    const std::string where = std::string("mpi_memory_alloc_kinds of ") + name + " " + mcrp_test::shown(kinds);
    if (opts.expect_cuda_support == 0) {
      checker.check(mcrp_test::times_listed(kinds, "cuda") == 0, where + ": no cuda from the base MPI alone");
      continue;
    }
    checker.check(mcrp_test::times_listed(kinds, "cuda") == 1, where + ": cuda listed once");
    checker.check(mcrp_test::times_listed(kinds, "mpi") == 1 && mcrp_test::times_listed(kinds, "system") == 1,
                  where + ": mpi and system listed once");
  }
  MPI_Comm_free(&dup);
}

// A dup of COMM_WORLD carrying the test attribute, after a collective ran on it (so a library that
// caches per-communicator state has some to clean up).
MPI_Comm attributed_dup(int keyval) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_attr(comm, keyval, &g_attr_value);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  return comm;
}

// Runs `release` on a fresh attributed dup and checks the delete callback ran exactly `deletes` times.
template <class Release>
void check_release(Checker& checker, int keyval, const char* what, int deletes, Release release) {
  g_log = CallbackLog{};
  MPI_Comm comm = attributed_dup(keyval);
  const int rc = release(comm);
  checker.check(rc == MPI_SUCCESS && comm == MPI_COMM_NULL, std::string(what) + ": succeeds and nulls the handle");
  checker.check(g_log.deletes == deletes && g_log.wrong_arguments == 0,
                std::string(what) + ": delete callback ran " + std::to_string(g_log.deletes) + " times (expected " +
                    std::to_string(deletes) + "), wrong arguments " + std::to_string(g_log.wrong_arguments));
}

void check_attributes(Checker& checker) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(copy_attr, delete_attr, &keyval, &g_extra_state);
  check_release(checker, keyval, "MPI_Comm_free", 1, [](MPI_Comm& c) { return MPI_Comm_free(&c); });
  check_release(checker, keyval, "MPI_Comm_disconnect", 1, [](MPI_Comm& c) { return MPI_Comm_disconnect(&c); });
  check_release(checker, keyval, "MPI_Comm_delete_attr then MPI_Comm_free", 1, [keyval](MPI_Comm& c) {
    MPI_Comm_delete_attr(c, keyval);
    return MPI_Comm_free(&c);
  });
  check_release(checker, keyval, "MPI_Comm_dup (copy callback) then free both", 2, [&checker, keyval](MPI_Comm& c) {
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Comm_dup(c, &copy);
    void* value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(copy, keyval, &value, &found);
    checker.check(g_log.copies == 1 && found == 1 && value == &g_attr_copy,
                  "MPI_Comm_dup runs the copy callback once (ran " + std::to_string(g_log.copies) +
                      ") and the dup holds the copied value");
    MPI_Comm_free(&copy);
    return MPI_Comm_free(&c);
  });
  MPI_Comm_free_keyval(&keyval);
}

// A COMM_SELF attribute whose delete callback MPI_Finalize must run (MPI-4 section 11.2.4).
void attach_finalize_attribute() {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_self_attr, &keyval, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, &g_attr_value);
  MPI_Comm_free_keyval(&keyval);  // the attribute keeps the keyval alive until it is deleted
}

// Under MPI_THREAD_MULTIPLE: a background thread's allreduces on one communicator interleave with
// the main thread's bcasts on another, as Horovod's control plane does beside user collectives.
void check_two_threads(Checker& checker) {
  constexpr int kRounds = 200;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm background = MPI_COMM_NULL, foreground = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &background);
  MPI_Comm_dup(MPI_COMM_WORLD, &foreground);
  int background_errors = 0, foreground_errors = 0;
  std::thread worker([&] {
    for (int round = 0; round < kRounds; ++round) {
      int in = rank + round, out = -1;
      const int rc = MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, background);
      if (rc != MPI_SUCCESS || out != size * (size - 1) / 2 + size * round) ++background_errors;
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    int value = rank == round % size ? round : -1;
    const int rc = MPI_Bcast(&value, 1, MPI_INT, round % size, foreground);
    if (rc != MPI_SUCCESS || value != round) ++foreground_errors;
  }
  worker.join();
  checker.check(background_errors == 0, "thread-multiple: background allreduce wrong " +
                                            std::to_string(background_errors) + " times");
  checker.check(foreground_errors == 0, "thread-multiple: foreground bcast wrong " +
                                            std::to_string(foreground_errors) + " times");
  MPI_Comm_free(&background);
  MPI_Comm_free(&foreground);
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  if (!parse(argc, argv, &opts)) return 2;
  int provided = -1;
  const int init_rc = opts.init_thread ? MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)
                                       : MPI_Init(&argc, &argv);
  Checker checker;
  checker.check(init_rc == MPI_SUCCESS, "init returns MPI_SUCCESS");
  check_init(checker, opts, provided);
  check_gpu_queries(checker, opts);
  check_alloc_kinds(checker, opts);
  check_attributes(checker);
  if (opts.init_thread && provided == MPI_THREAD_MULTIPLE) check_two_threads(checker);
  attach_finalize_attribute();
  int exit_code = checker.finish(MPI_COMM_WORLD, "test_lifecycle");

  const int finalize_rc = MPI_Finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize only local checks are possible: each rank reports its own and fails alone.
  if (finalize_rc != MPI_SUCCESS || finalized != 1 || g_self_log.deletes != 1 || g_self_log.wrong_arguments != 0) {
    std::fprintf(stderr,
                 "FAIL MPI_Finalize: rc %d, finalized %d, COMM_SELF delete callback ran %d times (expected 1), "
                 "wrong arguments %d\n",
                 finalize_rc, finalized, g_self_log.deletes, g_self_log.wrong_arguments);
    exit_code = 1;
  }
  return exit_code;
}
