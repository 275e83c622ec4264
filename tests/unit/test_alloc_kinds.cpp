// with_library_kinds (runtime/memory_alloc_kinds.h): the kinds the library adds to the base MPI's
// answer for MPI 4.1's mpi_memory_alloc_kinds, and which asked-for kinds it lists.
#include <gtest/gtest.h>

#include "runtime/memory_alloc_kinds.h"

namespace {

using mcrp::with_library_kinds;

TEST(AllocKinds, NoAnswerFromTheBaseIsMpi41sDefaultPlusCuda) {
  EXPECT_EQ(with_library_kinds(nullptr, nullptr), "mpi,system,cuda");
  EXPECT_EQ(with_library_kinds(nullptr, ""), "mpi,system,cuda");
}

TEST(AllocKinds, TheBasesAnswerIsKeptInItsOrder) {
  EXPECT_EQ(with_library_kinds("system,mpi,mpi:alloc_mem", nullptr), "system,mpi,mpi:alloc_mem,cuda");
  EXPECT_EQ(with_library_kinds("mpi,system,rocm", nullptr), "mpi,system,rocm,cuda");
  EXPECT_EQ(with_library_kinds("", nullptr), "cuda");  // the base supports none: only what the library adds
}

TEST(AllocKinds, NothingIsListedTwiceWhateverItsCase) {
  EXPECT_EQ(with_library_kinds("mpi,system,CUDA", nullptr), "mpi,system,CUDA");
  EXPECT_EQ(with_library_kinds(nullptr, "cuda,System,mpi,cuda:device,Cuda:Device"), "mpi,system,cuda,cuda:device");
}

TEST(AllocKinds, AskedKindsTheLibrarySupportsAreListedAsWritten) {
  EXPECT_EQ(with_library_kinds(nullptr, "cuda:device"), "mpi,system,cuda,cuda:device");
  EXPECT_EQ(with_library_kinds(nullptr, "cuda:host,cuda:managed:device"),
            "mpi,system,cuda,cuda:host,cuda:managed:device");
  EXPECT_EQ(with_library_kinds(nullptr, "mpi:alloc_mem:win_allocate,mpi:win_allocate_shared"),
            "mpi,system,cuda,mpi:alloc_mem:win_allocate,mpi:win_allocate_shared");
  EXPECT_EQ(with_library_kinds(nullptr, " cuda:device , mpi:alloc_mem ,,"), "mpi,system,cuda,cuda:device,mpi:alloc_mem");
}

TEST(AllocKinds, AskedKindsTheLibraryDoesNotSupportAreLeftOut) {
  EXPECT_EQ(with_library_kinds(nullptr, "rocm,rocm:device,level_zero:host"), "mpi,system,cuda");
  EXPECT_EQ(with_library_kinds(nullptr, "cuda:dev,cuda:device:bogus,system:host,mpi:device"), "mpi,system,cuda");
  EXPECT_EQ(with_library_kinds(nullptr, "cuda:,cudaa,:device,mpi::alloc_mem"), "mpi,system,cuda");
}

TEST(AllocKinds, KindsTheBaseSupportsStayWhenAskedAgain) {
  // The base (MPICH 5 on a ROCm build, say) lists rocm:device for a session that asked for it.
  EXPECT_EQ(with_library_kinds("mpi,system,rocm,rocm:device", "rocm:device,cuda:device"),
            "mpi,system,rocm,rocm:device,cuda,cuda:device");
}

}  // namespace
