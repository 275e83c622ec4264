/* Blocking collectives on (fake) device buffers, repeated `iterations` times on 2 ranks: what
 * tests/cost/device_call_cost.py runs under callgrind to count the instructions the library spends
 * on a device call outside its waits (issue 15: the NCCL path must cost what NCCL costs). The
 * buffers come from the library's fake device (MCRPMPI_FAKE_DEVICE=1); with the fake NCCL loaded
 * (MCRPMPI_NCCL_LIBRARY) the calls take the NCCL path, without it the staged path.
 *
 * Per iteration: Allreduce (8 B float sum), Allreduce in place, Bcast (8 B), Allgather (4 B a rank).
 * Every result is checked against what the ranks computed, so a broken path fails the count too.
 *
 * Usage: device_call_loop <iterations>. Prints the number of calls one iteration makes; exits 77
 * (skipped) when the fake device is not on. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCalls = 4, kSkip = 77 };

typedef void* (*AllocFn)(size_t);
typedef void (*FreeFn)(void*);

/* An allreduce through entry points the count does not collect (device_call_cost.py collects
 * MPI_Allreduce, MPI_Bcast and MPI_Allgather), for calls whose cost follows timing. */
static void allreduce_uncounted(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Request request;
  MPI_Iallreduce(send, recv, count, type, op, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

static int fail(int rank, const char* what, double got, double want) {
  fprintf(stderr, "device_call_loop[%d]: %s gave %g, expected %g\n", rank, what, got, want);
  return 1;
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 1000;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  AllocFn alloc = (AllocFn)dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_alloc");
  FreeFn release = (FreeFn)dlsym(RTLD_DEFAULT, "mcrpmpi_fake_device_free");
  /* The fake device's memory is host memory: the checks below read it directly. */
  float* in = alloc != NULL ? (float*)alloc(2 * sizeof(float)) : NULL;
  float* out = alloc != NULL ? (float*)alloc(2 * sizeof(float)) : NULL;
  int* mine = alloc != NULL ? (int*)alloc(sizeof(int)) : NULL;
  int* gathered = alloc != NULL ? (int*)alloc((size_t)size * sizeof(int)) : NULL;
  if (in == NULL || out == NULL || mine == NULL || gathered == NULL) {
    if (rank == 0) printf("SKIPPED: the library's fake device is not on (MCRPMPI_FAKE_DEVICE=1)\n");
    MPI_Finalize();
    return kSkip;
  }
  /* Untimed warm-up: the NCCL communicator's setup (a wait whose length follows timing) and the
   * pools' first allocations happen here. */
  allreduce_uncounted(in, out, 2, MPI_FLOAT, MPI_SUM);
  const float ranks_sum = (float)(size * (size - 1)) / 2.0f;
  int bad = 0;
  for (long i = 0; i < iterations && !bad; ++i) {
    const float step = (float)(i % 1000);
    in[0] = (float)rank + step;
    in[1] = 1.0f;
    MPI_Allreduce(in, out, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (out[0] != ranks_sum + (float)size * step) bad = fail(rank, "Allreduce", out[0], ranks_sum + (float)size * step);
    MPI_Allreduce(MPI_IN_PLACE, out, 2, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    if (out[1] != (float)size) bad = fail(rank, "Allreduce in place", out[1], (float)size);
    in[0] = rank == 0 ? step : -1.0f;
    MPI_Bcast(in, 2, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (in[0] != step) bad = fail(rank, "Bcast", in[0], step);
    *mine = rank * 1000 + (int)(i % 1000);
    MPI_Allgather(mine, 1, MPI_INT, gathered, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size && !bad; ++r) {
      if (gathered[r] != r * 1000 + (int)(i % 1000)) bad = fail(rank, "Allgather", gathered[r], r * 1000 + (int)(i % 1000));
    }
  }
  /* Uncounted too: this call waits for the slower rank to end its loop, and the base MPI spins
   * meanwhile (as a counted MPI_Allreduce on a busy machine: once 538,000 instructions in this one
   * call, and a failed budget, 1,780 over a call). */
  allreduce_uncounted(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX);
  release(gathered);
  release(mine);
  release(out);
  release(in);
  MPI_Finalize();
  if (!bad && rank == 0) printf("calls per iteration: %d\n", kCalls);
  return bad;
}
