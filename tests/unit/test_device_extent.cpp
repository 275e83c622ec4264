// MCRPMPI_VERIFY's device-buffer extent check (runtime/device_extent.h) on the fake device, whose
// allocations have exactly the size asked for: spans that fit, spans one byte or one element past
// the end, spans that start before the allocation (a negative lower bound), gaps between blocks,
// empty spans, host memory and pointers of no known allocation.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "device/fake_device.h"
#include "runtime/device_extent.h"

namespace {

using mcrp::Block;
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

BufferSide side(char* base, std::vector<Block> blocks) {
  BufferSide s;
  s.base = base;
  s.type = MPI_INT;
  s.blocks = std::move(blocks);
  s.read = true;
  return s;
}

int error_class(const mcrp::Status& status) { return status.error_class(); }

TEST(DeviceExtent, ExactFitPassesOneElementMoreFails) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 4}}), kInt, kDevice)), MPI_SUCCESS);
  const mcrp::Status past = check_device_extent(side(block.data, {{0, 5}}), kInt, kDevice);
  EXPECT_EQ(error_class(past), MPI_ERR_BUFFER);
  EXPECT_NE(past.message().find("bytes [0, 20)"), std::string::npos) << past.message();
  EXPECT_NE(past.message().find("covers bytes [0, 16)"), std::string::npos) << past.message();
}

TEST(DeviceExtent, OneBytePastTheEndFails) {
  FakeBlock block(15);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 4}}), kInt, kDevice)), MPI_ERR_BUFFER);
}

TEST(DeviceExtent, BaseInsideTheAllocation) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_device_extent(side(block.data + 8, {{0, 2}}), kInt, kDevice)), MPI_SUCCESS);
  EXPECT_EQ(error_class(check_device_extent(side(block.data + 8, {{0, 3}}), kInt, kDevice)), MPI_ERR_BUFFER);
}

TEST(DeviceExtent, NegativeLowerBoundMustStayInside) {
  FakeBlock block(16);
  const TypeInfo shifted{4, 4, -4, 4};  // each element 4 bytes before its address
  EXPECT_EQ(error_class(check_device_extent(side(block.data + 4, {{0, 4}}), shifted, kDevice)), MPI_SUCCESS);
  const mcrp::Status before = check_device_extent(side(block.data, {{0, 1}}), shifted, kDevice);
  EXPECT_EQ(error_class(before), MPI_ERR_BUFFER);
  EXPECT_NE(before.message().find("covers bytes [0, 16)"), std::string::npos) << before.message();
}

TEST(DeviceExtent, BlocksWithGapsCountTheirFurthestByte) {
  FakeBlock block(16);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 1}, {3, 1}}), kInt, kDevice)), MPI_SUCCESS);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 1}, {4, 1}}), kInt, kDevice)), MPI_ERR_BUFFER);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{4, 0}, {1, 1}}), kInt, kDevice)), MPI_SUCCESS)
      << "a block of no elements covers nothing";
}

TEST(DeviceExtent, NothingToCheck) {
  FakeBlock block(4);
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 0}}), kInt, kDevice)), MPI_SUCCESS) << "count 0";
  const PointerInfo host{MemoryKind::host, -1};
  EXPECT_EQ(error_class(check_device_extent(side(block.data, {{0, 8}}), kInt, host)), MPI_SUCCESS)
      << "host memory is the base MPI's";
  int unknown[2] = {0, 0};
  EXPECT_EQ(error_class(check_device_extent(side(reinterpret_cast<char*>(unknown), {{0, 8}}), kInt, kDevice)),
            MPI_SUCCESS)
      << "no known allocation: nothing to compare with";
  EXPECT_EQ(error_class(check_device_extent(BufferSide{}, kInt, kDevice)), MPI_SUCCESS) << "not significant";
}

}  // namespace
