// The staging buffer pool's bound (device/buffer_pool.h): idle blocks past the limit are freed (on
// the background thread), reuse hands back cached blocks, the counts add up. Runs on the fake
// device, so the same code paths as on a GPU except the CUDA calls themselves.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "device/buffer_pool.h"

namespace {

using mcrp::device::acquire;
using mcrp::device::Buffer;
using mcrp::device::BufferKind;
using mcrp::device::pool_usage;

// Set before anything reads them (both are read once per process).
const bool g_environment = [] {
  setenv("MCRPMPI_FAKE_DEVICE", "1", 1);
  setenv("MCRPMPI_PINNED_POOL_LIMIT", "4K", 1);
  setenv("MCRPMPI_DEVICE_POOL_LIMIT", "1M", 1);
  return true;
}();

std::size_t settled_cached(BufferKind kind) {
  std::size_t cached = 0;
  mcrpmpi_pool_bytes(kind == BufferKind::device ? 1 : 0, nullptr, &cached, nullptr);  // waits for frees
  return cached;
}

TEST(BufferPool, LimitsComeFromTheEnvironmentWithSuffixes) {
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).limit, 4096u);
  EXPECT_EQ(pool_usage(BufferKind::device).limit, 1u << 20);
}

TEST(BufferPool, ReuseAndBound) {
  mcrp::device::release_cached_buffers();
  {
    Buffer one;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, one).ok());
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 1024u);  // bucket: next power of two
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 1024u);
  char* first = nullptr;
  {
    Buffer again;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1024, again).ok());
    first = again.data();
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 0u);  // the cached block came back
  }
  EXPECT_NE(first, nullptr);
  {
    std::vector<Buffer> many(4);
    for (Buffer& b : many) ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, b).ok());
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 4u * 2048u);
  }
  // 1024 cached before + 4 x 2048 returned, bound 4096: what does not fit was freed.
  EXPECT_LE(settled_cached(BufferKind::pinned_host), 4096u);
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 0u);
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).freeing, 0u);
}

TEST(BufferPool, BlockLargerThanTheLimitIsNeverCached) {
  mcrp::device::release_cached_buffers();
  {
    Buffer big;
    ASSERT_TRUE(acquire(BufferKind::device, 0, 2u << 20, big).ok());
    EXPECT_EQ(pool_usage(BufferKind::device).in_use, 2u << 20);
  }
  EXPECT_EQ(settled_cached(BufferKind::device), 0u);
  EXPECT_EQ(pool_usage(BufferKind::device).in_use, 0u);
}

TEST(BufferPool, ZeroBytesIsANullBuffer) {
  Buffer none;
  ASSERT_TRUE(acquire(BufferKind::device, 0, 0, none).ok());
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(pool_usage(BufferKind::device).in_use, 0u);
}

}  // namespace
