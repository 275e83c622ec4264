/* A fixed sequence of host-buffer MPI calls (point-to-point or collectives), repeated `iterations`
 * times on one rank: what
 * tests/cost/host_call_cost.py runs under callgrind with and without the library preloaded to count
 * the instructions and system calls the library adds to a host call. One rank, so nothing waits on
 * a peer and every count is exact: the same program with the same iterations executes the same
 * instructions each time.
 *
 * Usage: host_call_loop <iterations> p2p|collectives. Prints the number of calls one iteration makes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, int got, int want) {
  fprintf(stderr, "host_call_loop: %s gave %d, expected %d\n", what, got, want);
  return 1;
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 1000;
  const int p2p = argc > 2 && strcmp(argv[2], "p2p") == 0;
  const int collectives = argc > 2 && strcmp(argv[2], "collectives") == 0;
  if (!p2p && !collectives) {
    fprintf(stderr, "usage: host_call_loop <iterations> p2p|collectives\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int* heap = malloc(4 * sizeof(int));
  int stack[4] = {0, 0, 0, 0};
  int bad = 0;
  for (long i = 0; i < iterations && !bad; ++i) {
    MPI_Request requests[2];
    heap[0] = (int)i;
    if (collectives) {
      /* Allreduce, Bcast, Iallreduce + Wait, Barrier */
      MPI_Allreduce(heap, heap + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      MPI_Bcast(heap + 2, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Iallreduce(MPI_IN_PLACE, stack + 3, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &requests[0]);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
      MPI_Barrier(MPI_COMM_WORLD);
      if (heap[1] != (int)i) bad = fail("Allreduce", heap[1], (int)i);
      continue;
    }
    /* to oneself: Isend + Recv + Wait, Irecv + Send + Wait, Sendrecv */
    MPI_Isend(heap, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &requests[0]);
    MPI_Recv(stack, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    MPI_Irecv(stack + 1, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &requests[1]);
    MPI_Send(heap, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    MPI_Sendrecv(heap, 1, MPI_INT, 0, 9, stack + 2, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (stack[0] != (int)i) bad = fail("Recv", stack[0], (int)i);
    if (stack[1] != (int)i) bad = fail("Irecv", stack[1], (int)i);
    if (stack[2] != (int)i) bad = fail("Sendrecv", stack[2], (int)i);
  }
  free(heap);
  MPI_Finalize();
  if (!bad) printf("calls per iteration: %d\n", p2p ? 7 : 5);
  return bad;
}
