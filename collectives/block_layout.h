// Which blocks the buffers of a BlockCall (MPI_Alltoallw, the neighborhood collectives) hold on this
// rank, checked as the base MPI would check them, and described as the staged path copies them:
// each significant side as plain bytes from its base (MPI_BYTE blocks covering what each block's
// datatype reaches), so one pinned image per side serves any mix of datatypes and displacements,
// and the base MPI, given the image in place of the buffer, finds every block where it expects it.
#pragma once
#include <mpi.h>

#include "collectives/array_copies.h"
#include "collectives/block_call.h"
#include "runtime/staged_sides.h"
#include "device/status.h"

namespace mcrp {

// How many blocks each side has on this rank: one per rank of the other group for MPI_Alltoallw
// (the remote group on an intercommunicator), one per neighbor for the neighborhood collectives
// (the topology's out-degree for what is sent, in-degree for what is received; neighbor_allgather(v)
// sends one block). False when the communicator is invalid or, for a neighborhood collective, has
// no topology: the base MPI reports that.
struct BlockCounts {
  int sends = 0;
  int receives = 0;
  bool inter = false;
  // A Cartesian neighbor is MPI_PROC_NULL (a non-periodic border): its receive block keeps what it
  // held (MPI: "neither communicated nor updated").
  bool null_neighbors = false;
};
bool block_counts(const BlockCall& call, BlockCounts* counts);

// The sides as StagedSides (types MPI_BYTE, device unset), after the checks of the significant
// arguments only: MPI_IN_PLACE where MPI forbids it (MPI_ERR_BUFFER: every neighborhood collective,
// the receive buffer, an intercommunicator), a NULL counts, displacements or datatypes array with
// blocks to describe (MPI_ERR_ARG), a negative count or one whose bytes pass 2^63 (MPI_ERR_COUNT),
// an invalid or uncommitted datatype of a block that moves data (MPI_ERR_TYPE), a NULL buffer with
// data that is not at absolute addresses (MPI_ERR_BUFFER; MPI_BOTTOM is NULL). A byte block covers its datatype's
// holes, so a written side with a datatype that has holes is marked read too: its image must hold
// the device's bytes there, since the copy back writes the whole span (gaps between blocks the
// staging sees itself, runtime/staging.h); so is the receive side of a call with null neighbors.
// `received`, when given, gets the bytes of data the receive blocks hold (counts times datatype
// sizes), for MCRPMPI_STATS.
Status block_sides(const BlockCall& call, const BlockCounts& counts, StagedSides* sides,
                   MPI_Count* received = nullptr);

// `call` with every counts, displacements and datatypes array this rank reads (as block_sides
// reads them, `counts` entries each) replaced by a copy in `copies` (collectives/array_copies.h);
// arrays MPI ignores here, such as MPI_Alltoallw's send arrays in place, stay as they came.
BlockCall keep_arrays(const BlockCall& call, const BlockCounts& counts, ArrayCopies* copies);

}  // namespace mcrp
