// MCRPMPI_VERIFY's checks of the memory behind a buffer (runtime/memory_checks.h). Device memory on
// the fake device, whose allocations have exactly the size asked for: spans that fit, spans one byte
// or one element past the end, spans that start before the allocation (a negative lower bound), gaps
// between blocks, empty spans, pointers of no known allocation. Host memory: mapped spans pass
// (heap, stack, an mmap'd page), spans reaching into an unmapped page or lying in one fail.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "device/cuda_runtime.h"
#include "device/fake_device.h"
#include "device/host_regions.h"
#include "runtime/memory_checks.h"

namespace {

using mcrp::Block;
using mcrp::BlockList;
using mcrp::BufferSide;
using mcrp::TypeInfo;
using mcrp::device::MemoryKind;
using mcrp::device::PointerInfo;

const bool g_environment = [] {
  setenv("MCRPMPI_FAKE_DEVICE", "1", 1);  // read once per process
  return true;
}();

const TypeInfo kInt{4, 4, 0, 4};  // size, extent, true lower bound, true extent
const PointerInfo kDevice{MemoryKind::device, 0};

// A fake device allocation of `bytes`, released on destruction.
struct FakeBlock {
  explicit FakeBlock(std::size_t bytes) : data(static_cast<char*>(mcrp::device::fake_allocate(bytes))) {}
  ~FakeBlock() { mcrp::device::fake_release(data); }
  char* data;
};

BufferSide side(char* base, BlockList blocks) {
  BufferSide s;
  s.base = base;
  s.type = MPI_INT;
  s.blocks = std::move(blocks);
  s.read = true;
  return s;
}

int error_class(const mcrp::Status& status) { return status.error_class(); }

TEST(MemoryChecks, ExactFitPassesOneElementMoreFails) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{0, 4}}), kInt, kDevice)), MPI_SUCCESS);
  const mcrp::Status past = check_buffer_memory(side(block.data, {{0, 5}}), kInt, kDevice);
  EXPECT_EQ(error_class(past), MPI_ERR_BUFFER);
  EXPECT_NE(past.message().find("bytes [0, 20)"), std::string::npos) << past.message();
  EXPECT_NE(past.message().find("covers bytes [0, 16)"), std::string::npos) << past.message();
}

TEST(MemoryChecks, OneBytePastTheEndFails) {
  FakeBlock block(15);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{0, 4}}), kInt, kDevice)), MPI_ERR_BUFFER);
}

TEST(MemoryChecks, BaseInsideTheAllocation) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data + 8, {{0, 2}}), kInt, kDevice)), MPI_SUCCESS);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data + 8, {{0, 3}}), kInt, kDevice)), MPI_ERR_BUFFER);
}

TEST(MemoryChecks, NegativeLowerBoundMustStayInside) {
  FakeBlock block(16);
  const TypeInfo shifted{4, 4, -4, 4};  // each element 4 bytes before its address
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data + 4, {{0, 4}}), shifted, kDevice)), MPI_SUCCESS);
  const mcrp::Status before = check_buffer_memory(side(block.data, {{0, 1}}), shifted, kDevice);
  EXPECT_EQ(error_class(before), MPI_ERR_BUFFER);
  EXPECT_NE(before.message().find("covers bytes [0, 16)"), std::string::npos) << before.message();
}

TEST(MemoryChecks, BlocksWithGapsCountTheirFurthestByte) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{0, 1}, {3, 1}}), kInt, kDevice)), MPI_SUCCESS);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{0, 1}, {4, 1}}), kInt, kDevice)), MPI_ERR_BUFFER);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{4, 0}, {1, 1}}), kInt, kDevice)), MPI_SUCCESS)
      << "a block of no elements covers nothing";
}

TEST(MemoryChecks, NothingToCheck) {
  FakeBlock block(4);
  EXPECT_EQ(error_class(check_buffer_memory(side(block.data, {{0, 0}}), kInt, kDevice)), MPI_SUCCESS) << "count 0";
  int unknown[2] = {0, 0};
  EXPECT_EQ(error_class(check_buffer_memory(side(reinterpret_cast<char*>(unknown), {{0, 8}}), kInt, kDevice)),
            MPI_SUCCESS)
      << "no known allocation: nothing to compare with";
  EXPECT_EQ(error_class(check_buffer_memory(BufferSide{}, kInt, kDevice)), MPI_SUCCESS) << "not significant";
}

const PointerInfo kHost{MemoryKind::host, -1};

TEST(MemoryChecks, MappedHostMemoryPasses) {
  int on_stack[4] = {};
  std::vector<int> on_heap(1 << 16);  // 256 KiB: an mmap'd block, past the lasting regions
  EXPECT_EQ(error_class(check_buffer_memory(side(reinterpret_cast<char*>(on_stack), {{0, 4}}), kInt, kHost)),
            MPI_SUCCESS);
  EXPECT_EQ(error_class(check_buffer_memory(side(reinterpret_cast<char*>(on_heap.data()), {{0, 1 << 16}}), kInt,
                                            kHost)),
            MPI_SUCCESS);
}

// check_buffer_memory of `blocks` at `offset` bytes into two fresh pages of host memory whose second
// is unmapped. The side is built before the page goes, and nothing else runs until the check: its
// block list is an allocation, and an allocator that maps fresh memory for it may be given the freed
// page, which is then the process's memory again (ASan's did, for a size class it had not used yet,
// when this test ran alone: 2026-12-01).
mcrp::Status check_before_hole(std::size_t offset, BlockList blocks) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  char* two = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (two == MAP_FAILED) return mcrp::Status(MPI_ERR_OTHER, "the test's mmap failed");
  const BufferSide s = side(two + offset, std::move(blocks));
  EXPECT_EQ(munmap(two + page, page), 0);  // the second page is gone
  mcrp::Status status = check_buffer_memory(s, kInt, kHost);
  munmap(two, page);
  return status;
}

TEST(MemoryChecks, UnmappedHostMemoryFails) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto ints = static_cast<MPI_Count>(page / sizeof(int));
  EXPECT_EQ(error_class(check_before_hole(0, {{0, ints}})), MPI_SUCCESS) << "the mapped page";
  const mcrp::Status across = check_before_hole(0, {{0, ints + 1}});
  EXPECT_EQ(error_class(across), MPI_ERR_BUFFER) << "one int into the unmapped page";
  EXPECT_NE(across.message().find("not mapped"), std::string::npos) << across.message();
  EXPECT_EQ(error_class(check_before_hole(page, {{0, 1}})), MPI_ERR_BUFFER) << "inside the unmapped page";
  EXPECT_EQ(error_class(check_before_hole(page, {{0, 0}})), MPI_SUCCESS) << "count 0 reads nothing";
}

// Fake device memory stands for cudaMalloc's, which is never in the places the library knows as
// host without asking (device/host_regions.h): so a lookup on the fake device takes a GPU's path,
// that check first. From malloc, small blocks would sit in the brk heap and be called host.
TEST(FakeDeviceMemory, NeverInLastingHostMemory) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20}) {
    FakeBlock block(bytes);
    ASSERT_NE(block.data, nullptr) << bytes;
    EXPECT_FALSE(mcrp::device::in_lasting_host_memory(block.data)) << bytes << " bytes";
    EXPECT_EQ(mcrp::device::locate(block.data).kind, MemoryKind::device) << bytes << " bytes";
  }
}

// A double free, or a pointer that is not the start of a fake allocation, is a test's bug: said,
// not ignored (cudaFree refuses such a pointer too).
TEST(FakeDeviceMemoryDeathTest, FreeOfAnythingElseStops) {
  int on_stack = 0;
  EXPECT_DEATH(mcrp::device::fake_release(&on_stack), "not the start of fake device memory");
  FakeBlock block(64);
  EXPECT_DEATH(mcrp::device::fake_release(block.data + 8), "not the start of fake device memory");
}

}  // namespace
