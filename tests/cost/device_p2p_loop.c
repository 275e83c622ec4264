/* Blocking point-to-point calls on (fake) device buffers, repeated `iterations` times on 2 ranks:
 * what tests/cost/device_call_cost.py runs under callgrind (--calls p2p) to count the instructions
 * the library spends on a small device send or receive outside its waits (issue 10: small messages
 * dominate pipeline-parallel and task-exchange codes). The buffers come from the library's fake
 * device (MCRPMPI_FAKE_DEVICE=1).
 *
 * device-only: on a duplicate of MPI_COMM_WORLD asserted to carry device memory only
 * (mpi_assert_memory_alloc_kinds=cuda:device), where an 8 B message travels inside the library's
 * header; staged: on a plain duplicate, where the library stages through pinned host memory.
 *
 * Per iteration, rank 0 sends 8 B to rank 1, then receives 8 B from it (MPI_Send, MPI_Recv: the
 * counted calls; rank 1 mirrors them). An uncounted host barrier between a send and its receive
 * lets every receive find its message arrived, so no counted call waits on a peer and the count
 * does not follow timing. Every message is checked, so a broken path fails the count too.
 *
 * Usage: device_p2p_loop <iterations> device-only|staged. Prints the number of counted calls one
 * iteration makes; exits 77 (skipped) when the fake device is not on. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCalls = 2, kSkip = 77 };

typedef void* (*AllocFn)(size_t);
typedef void (*FreeFn)(void*);

/* A barrier through an entry point the count does not collect (device_call_cost.py collects
 * MPI_Send and MPI_Recv only). */
static void barrier_uncounted(void) { MPI_Barrier(MPI_COMM_WORLD); }

static MPI_Comm duplicate(int device_only) {
  MPI_Comm comm;
  if (!device_only) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    return comm;
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_memory_alloc_kinds", "cuda:device");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
  MPI_Info_free(&info);
  return comm;
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 1000;
  const char* mode = argc > 2 ? argv[2] : "device-only";
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int device_only = strcmp(mode, "device-only") == 0;
  if ((!device_only && strcmp(mode, "staged") != 0) || size != 2) {
    if (rank == 0) fprintf(stderr, "device_p2p_loop: <iterations> device-only|staged, on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  AllocFn alloc = (AllocFn)dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_alloc");
  FreeFn release = (FreeFn)dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_free");
  /* The fake device's memory is host memory: the checks below read it directly. */
  double* out = alloc != NULL ? (double*)alloc(sizeof(double)) : NULL;
  double* in = alloc != NULL ? (double*)alloc(sizeof(double)) : NULL;
  if (out == NULL || in == NULL) {
    if (rank == 0) printf("SKIPPED: the library's fake device is not on (MCRPMPI_FAKE_DEVICE=1)\n");
    MPI_Finalize();
    return kSkip;
  }
  MPI_Comm comm = duplicate(device_only);
  const int peer = 1 - rank;
  /* First calls' costs (the pools' first blocks) are the same in both runs: the difference of two
   * iteration counts leaves them out. A wrong message is counted, not a reason to stop: the peer
   * would wait in the next barrier. */
  int bad = 0;
  for (long i = 0; i < iterations; ++i) {
    for (int sender = 0; sender < 2; ++sender) {
      const double value = (double)(i * 2 + sender);
      if (rank == sender) {
        *out = value;
        MPI_Send(out, 1, MPI_DOUBLE, peer, 1, comm);
      }
      barrier_uncounted();
      if (rank != sender) {
        *in = -1.0;
        MPI_Recv(in, 1, MPI_DOUBLE, peer, 1, comm, MPI_STATUS_IGNORE);
        if (*in != value) {
          fprintf(stderr, "device_p2p_loop[%d]: %s MPI_Recv gave %g, expected %g\n", rank, mode, *in, value);
          bad = 1;
        }
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_free(&comm);
  release(in);
  release(out);
  MPI_Finalize();
  if (!bad && rank == 0) printf("calls per iteration: %d\n", kCalls);
  return bad;
}
