// Bugs of the base MPI that the host-buffer tests step around, reporting each skipped case.
// All were found in Debian's MPICH 4.0.2 (ch4:ucx) with plain MPICH, no library loaded:
//  - MPI_Reduce with MPI_IN_PLACE at a root other than 0 dereferences MPI_IN_PLACE and crashes once
//    the message exceeds about 2 KiB (512 ints pass, 600 crash); MPIR_CVAR_DEVICE_COLLECTIVES=none
//    avoids it, so the ch4 device-level reduce is at fault.
//  - MPI_Reduce_scatter with MPI_IN_PLACE and uneven blocks of ~64 Ki elements fails an internal
//    assertion ("memcpy argument memory ranges overlap") and aborts, on 2 and 3 ranks.
//  - MPI_Reduce on an intercommunicator rejects a null sendbuf at MPI_ROOT (MPI_ERR_BUFFER, "Null
//    buffer pointer"), where MPI makes it insignificant (MPICH 4.0.2 and 4.0.3; 4.1.3 and later
//    accept it; the library hands the base MPI a stand-in: collectives/base_call.h).
//  - MPI_Allgatherv on a 1-rank communicator, not in place, ignores displs[0] and writes at offset 0
//    (the library places the block itself: collectives/base_call.cpp).
//  - The int forms of MPI_Neighbor_alltoallw (blocking, nonblocking, persistent) copy the send
//    counts by the in-degree and the receive counts by the out-degree, so where a rank's degrees
//    differ its receive counts past the out-degree are whatever memory held (MPICH 4.0.0-4.0.2;
//    docs/base-mpi-defects.md). The library calls the _c forms instead (collectives/widened_base.h).
// The pip wheels of MPICH 4.1.3, 4.2.3, 4.3.2 and 5.0.2 share the reduce_scatter defect (tests/abi;
// the first three tried by hand on 2026-12-01); 5.0.2 adds one:
//  - MPI_Allreduce with MPI_DATATYPE_NULL fails an internal assertion ("dt_ptr") and aborts instead
//    of returning an error (MPI_Bcast with it, and the other bad arguments, do return errors).
// Each is detected at run time, so an MPI without the bug runs the full test.
#pragma once
#include <mpi.h>

namespace mcrp_test {

struct BaseMpiQuirks {
  bool inplace_reduce_at_nonzero_root_crashes = false;  // for messages over kInplaceReduceSafeBytes
  bool single_rank_allgatherv_ignores_displs = false;
  bool inplace_reduce_scatter_large_aborts = false;  // blocks of kLargeReduceScatterBlock elements
  bool reduction_datatype_null_aborts = false;
  bool narrow_neighbor_alltoallw_swaps_degrees = false;
  bool intercomm_reduce_rejects_null_root_sendbuf = false;
  // libmcrpmpi is loaded; it avoids the two crashes above itself (collectives/base_call.cpp), so
  // the tests run those cases as checks beyond the base MPI (check.h) instead of skipping them.
  bool library_present = false;

  static constexpr MPI_Count kInplaceReduceSafeBytes = 2048;
  static constexpr MPI_Count kLargeReduceScatterBlock = 65539;

  // Call after MPI_Init; uses only PMPI_ and MPI_Get_library_version, never the library under test.
  static BaseMpiQuirks detect();
};

}  // namespace mcrp_test
