// The routing decision: every rule of collectives/route.cpp, and that only agreed inputs (plus the
// local memory type) can change the path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "collectives/route.h"

namespace mcrp {
namespace {

RouteInput device_call(CollKind kind, int size = 4) {
  RouteInput in;
  in.kind = kind;
  in.device_memory = true;
  in.comm_size = size;
  in.nccl_reducible = true;
  in.agreed_bytes = 4096;
  return in;
}

class RouteTest : public ::testing::Test {
 protected:
  void SetUp() override { tuning::load_settings(); }
};

TEST_F(RouteTest, HostBuffersGoToTheBaseMpi) {
  RouteInput in = device_call(CollKind::allreduce);
  in.device_memory = false;
  EXPECT_EQ(choose_route(in).path, Path::mpi);
}

TEST_F(RouteTest, DeviceReductionWithNcclTypeGoesToNccl) {
  const Route r = choose_route(device_call(CollKind::allreduce));
  EXPECT_EQ(r.path, Path::nccl);
  EXPECT_TRUE(r.by_table);
}

TEST_F(RouteTest, EveryDataMovementCollectiveCanUseNccl) {
  for (CollKind kind : {CollKind::bcast, CollKind::allgather, CollKind::allgatherv, CollKind::alltoall,
                        CollKind::alltoallv, CollKind::gather, CollKind::gatherv, CollKind::scatter,
                        CollKind::scatterv}) {
    RouteInput in = device_call(kind);
    in.nccl_reducible = false;  // irrelevant for data movement
    EXPECT_EQ(choose_route(in).path, Path::nccl) << kind_name(kind);
  }
}

TEST_F(RouteTest, UnsupportedTypeOrOpIsStaged) {
  RouteInput in = device_call(CollKind::reduce_scatter);
  in.nccl_reducible = false;
  EXPECT_EQ(choose_route(in).path, Path::staged);
}

TEST_F(RouteTest, WithoutNcclOnEveryRankDeviceCallsAreStaged) {
  RouteInput in = device_call(CollKind::allreduce);
  in.nccl_everywhere = false;
  EXPECT_EQ(choose_route(in).path, Path::staged);
  setenv("MCRPMPI_ALLREDUCE", "nccl", 1);  // not even forced: some rank could not run it
  tuning::load_settings();
  EXPECT_EQ(choose_route(in).path, Path::staged);
  unsetenv("MCRPMPI_ALLREDUCE");
}

TEST_F(RouteTest, ScansAreStaged) {
  EXPECT_EQ(choose_route(device_call(CollKind::scan)).path, Path::staged);
  EXPECT_EQ(choose_route(device_call(CollKind::exscan)).path, Path::staged);
}

TEST_F(RouteTest, OneRankUsesALocalCopyUnlessNonContiguous) {
  RouteInput in = device_call(CollKind::allgather, 1);
  EXPECT_EQ(choose_route(in).path, Path::local_copy);
  in.contiguous = false;
  EXPECT_EQ(choose_route(in).path, Path::staged);
  // A predefined op on a derived datatype is staged too, for the base MPI to check (issue 13).
  in.kind = CollKind::allreduce;
  in.contiguous = true;
  in.predefined_op_on_derived_type = true;
  EXPECT_EQ(choose_route(in).path, Path::staged);
}

TEST_F(RouteTest, IntercommunicatorsAreStaged) {
  RouteInput in = device_call(CollKind::allreduce);
  in.intercomm = true;
  EXPECT_EQ(choose_route(in).path, Path::staged);
}

TEST_F(RouteTest, ZeroSizeGoesToTheBaseMpiOnEveryRank) {
  RouteInput device = device_call(CollKind::allreduce);
  device.agreed_bytes = 0;
  RouteInput host = device;
  host.device_memory = false;
  EXPECT_EQ(choose_route(device).path, Path::mpi);
  EXPECT_EQ(choose_route(host).path, Path::mpi);
}

TEST_F(RouteTest, DisagreementFoundByVerificationSendsEveryoneToTheBaseMpi) {
  RouteInput device = device_call(CollKind::allreduce);
  device.memory_disagrees = true;
  RouteInput host = device;
  host.device_memory = false;
  // Device ranks stage their buffers, host ranks call the base MPI directly: both run the base
  // MPI's collective, so they match.
  EXPECT_EQ(choose_route(device).path, Path::staged);
  EXPECT_EQ(choose_route(host).path, Path::mpi);
}

TEST_F(RouteTest, UnknownSizeStillDecides) {
  RouteInput in = device_call(CollKind::alltoallv);
  in.agreed_bytes = tuning::kUnknownSize;
  EXPECT_EQ(choose_route(in).path, Path::nccl);
}

TEST_F(RouteTest, EnvironmentOverrideForcesThePath) {
  setenv("MCRPMPI_ALLREDUCE", "mpi", 1);
  tuning::load_settings();
  const Route r = choose_route(device_call(CollKind::allreduce));
  EXPECT_EQ(r.path, Path::staged);
  EXPECT_EQ(r.decision.source, tuning::Source::env_override);
  EXPECT_EQ(choose_route(device_call(CollKind::bcast)).path, Path::nccl);  // others untouched
  setenv("MCRPMPI_ALLREDUCE", "auto", 1);
  tuning::load_settings();
  EXPECT_EQ(choose_route(device_call(CollKind::allreduce)).path, Path::nccl);
  unsetenv("MCRPMPI_ALLREDUCE");
}

TEST_F(RouteTest, CudaAwareBaseTakesWhatWouldBeStaged) {
  // Every rule that stages hands the buffers to a CUDA-aware base MPI instead; the others hold.
  RouteInput scan = device_call(CollKind::scan);
  scan.base_takes_device_memory = true;
  EXPECT_EQ(choose_route(scan).path, Path::direct);
  RouteInput untyped = device_call(CollKind::allreduce);
  untyped.nccl_reducible = false;
  untyped.base_takes_device_memory = true;
  const Route r = choose_route(untyped);
  EXPECT_EQ(r.path, Path::direct);
  EXPECT_STREQ(r.reason, "datatype or op has no NCCL equivalent");
  RouteInput nccl = device_call(CollKind::allreduce);
  nccl.base_takes_device_memory = true;
  EXPECT_EQ(choose_route(nccl).path, Path::nccl);
  RouteInput host = nccl;
  host.device_memory = false;
  EXPECT_EQ(choose_route(host).path, Path::mpi);
  RouteInput one_rank = device_call(CollKind::allreduce, 1);
  one_rank.base_takes_device_memory = true;
  EXPECT_EQ(choose_route(one_rank).path, Path::local_copy);
  EXPECT_STREQ(path_name(Path::direct), "direct");
}

TEST_F(RouteTest, SamePathForEveryRankGivenAgreedInputs) {
  // Rooted collectives: the root and the others compute the same agreed size, so the same path,
  // whatever their local argument shapes.
  RouteInput root = device_call(CollKind::gather);
  RouteInput other = root;
  other.contiguous = false;  // local layout differences do not matter with several ranks
  EXPECT_EQ(choose_route(root).path, choose_route(other).path);
}

}  // namespace
}  // namespace mcrp
