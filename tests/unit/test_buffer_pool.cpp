// The staging buffer pool's bound (device/buffer_pool.h): idle blocks past the limit are freed (on
// the background thread), reuse hands back cached blocks, the counts add up, and blocks that
// abandoned device work may still use are never handed out again. Runs on the fake device, so the
// same code paths as on a GPU except the CUDA calls themselves; the BufferPoolAsync cases need
// MCRPMPI_FAKE_DEVICE=async (registered so in tests/unit/CMakeLists.txt) and skip otherwise.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "device/buffer_pool.h"
#include "device/fake_device.h"
#include "device/handles.h"
#include "device/wait.h"

namespace {

using mcrp::device::acquire;
using mcrp::device::Buffer;
using mcrp::device::BufferKind;
using mcrp::device::pool_usage;

// Set before anything reads them (both are read once per process); an async fake device chosen by
// the test's registration is kept.
const bool g_environment = [] {
  setenv("MCRPMPI_FAKE_DEVICE", "1", 0);
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

TEST(BufferPool, BlocksHandedOutBeforeAbandonedWorkAreNotReused) {
  mcrp::device::release_cached_buffers();
  {
    Buffer pinned, device;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, pinned).ok());
    ASSERT_TRUE(acquire(BufferKind::device, 0, 1000, device).ok());
    mcrp::device::note_abandoned_work();  // a failed call whose copies may still use them
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 0u);
  EXPECT_EQ(settled_cached(BufferKind::device), 0u);
  EXPECT_EQ(pool_usage(BufferKind::device).freeing, 0u);
  {
    Buffer later;  // handed out after the failure: pooled as usual
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, later).ok());
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 1024u);
}

// A wait that gives up on a copy still queued (here: its progress hook fails, as on a timeout or a
// peer's error) must keep the copy's blocks from reuse: the copy runs later and would write into
// whichever call had the block next.
TEST(BufferPoolAsync, AFailedWaitKeepsItsCopysBlocksFromReuse) {
  if (!mcrp::device::fake_device_async()) GTEST_SKIP() << "needs MCRPMPI_FAKE_DEVICE=async";
  mcrp::device::release_cached_buffers();
  struct FailingHook final : mcrp::device::ProgressHook {
    mcrp::Status poll() override { return mcrp::Status(MPI_ERR_OTHER, "peer failed"); }
  } failing;
  {
    Buffer image, source;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, image).ok());
    ASSERT_TRUE(acquire(BufferKind::device, 0, 1000, source).ok());
    mcrp::device::Stream stream;
    ASSERT_TRUE(mcrp::device::create_library_stream(stream).ok());
    ASSERT_TRUE(mcrp::device::copy_async(image.data(), source.data(), 1000, stream.get(), "test copy").ok());
    EXPECT_FALSE(mcrp::device::wait_stream(stream.get(), failing).ok());
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 0u);
  EXPECT_EQ(settled_cached(BufferKind::device), 0u);
}

TEST(BufferPool, ZeroBytesIsANullBuffer) {
  Buffer none;
  ASSERT_TRUE(acquire(BufferKind::device, 0, 0, none).ok());
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(pool_usage(BufferKind::device).in_use, 0u);
}

}  // namespace
