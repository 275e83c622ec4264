// How a collective benchmark describes itself: its name, the shape of its data (which decides buffer
// sizes, what is filled and what the result must be), and how to call it. Everything else (sizes,
// timing, overlap, validation, printing) is run_collective's.
#pragma once
#include <mpi.h>

namespace osu {

enum class Shape {
  all_reduce,      // every rank gets the sum of all inputs (allreduce)
  root_reduce,     // the root gets the sum (reduce)
  broadcast,       // every rank gets the root's buffer (bcast)
  all_gather,      // every rank gets every rank's block, in rank order (allgather, allgatherv)
  root_gather,     // the root gets them (gather, gatherv)
  all_to_all,      // block j of rank i goes to rank j (alltoall, alltoallv)
  reduce_scatter,  // rank i gets block i of the sum (reduce_scatter, reduce_scatter_block)
  root_scatter,    // rank i gets block i of the root's buffer (scatter, scatterv)
  none,            // no data (barrier)
};

// The arguments of one call. count is the per-rank block in elements (OSU's message size / element
// size); counts and displs give the vector forms equal blocks at rank-major offsets.
struct CallArgs {
  const void* send;
  void* recv;
  int count;
  MPI_Datatype type;
  MPI_Comm comm;
  int root;
  const int* counts;
  const int* displs;
};

struct CollectiveSpec {
  const char* name;                        // "Allreduce": the title and the default datatype follow
  Shape shape;
  void (*call)(const CallArgs&);           // the blocking form, or
  MPI_Request (*start)(const CallArgs&);   // the nonblocking form (overlap is measured)
  // For benchmarks of another library than MPI (the raw-NCCL reference):
  bool device_only = false;                // buffers always on the GPU (no GPU: as -d cuda)
  bool bandwidth = false;                  // add nccl-tests' algorithm and bus bandwidth columns
  void (*setup)(MPI_Comm) = nullptr;       // once, collectively, before the first size
  void (*teardown)() = nullptr;            // once, before MPI_Finalize
};

int run_collective(int argc, char** argv, const CollectiveSpec& spec);

}  // namespace osu

// A benchmark's whole main().
#define OSU_COLLECTIVE_MAIN(spec) \
  int main(int argc, char** argv) { return osu::run_collective(argc, argv, spec); }
