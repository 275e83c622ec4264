// The staging buffer pool's bound (device/buffer_pool.h): idle blocks past the limit are freed (on
// the background thread), reuse hands back cached blocks, the counts add up, and blocks that
// abandoned device work may still use are never handed out again. Runs on the fake device, so the
// same code paths as on a GPU except the CUDA calls themselves; the BufferPoolAsync cases need
// MCRPMPI_FAKE_DEVICE=async (registered so in tests/unit/CMakeLists.txt) and skip otherwise.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "device/buffer_pool.h"
#include "device/fake_device.h"
#include "device/handles.h"
#include "device/quiet_work.h"
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

// A working set a little over the limit gives up its smallest block, not a large one it will need
// again: with the largest freed first, osu_bw's 64 staging blocks of 4 MiB (256 MiB, the pinned
// default) plus a small one freed and allocated one 4 MiB block every iteration.
TEST(BufferPool, AWorkingSetOverTheLimitKeepsItsLargeBlocks) {
  mcrp::device::release_cached_buffers();
  std::vector<char*> large_blocks;
  {
    Buffer first, second, small;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, first).ok());
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, second).ok());
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 100, small).ok());
    large_blocks = {first.data(), second.data()};
  }
  // 2 x 2048 + 256 returned, bound 4096: the 256 B block goes.
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 4096u);
  Buffer first, second;
  ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, first).ok());
  ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, second).ok());
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 0u);
  std::vector<char*> again{first.data(), second.data()};
  std::sort(again.begin(), again.end());
  std::sort(large_blocks.begin(), large_blocks.end());
  EXPECT_EQ(again, large_blocks) << "both 2 KiB blocks should have come back from the cache";
}

// A size that grows past the limit gives up the blocks of the sizes it left behind, not the ones it
// uses now: osu_bw from 1 to 4 MiB left 64 idle blocks of 1 MiB and 64 of 2 MiB cached (192 MiB of
// the 256 MiB default), the trims at 4 MiB freed 4 MiB blocks (the smallest that covered each
// excess, or the largest) and kept the stale ones, and every iteration allocated and freed about 48
// blocks of 4 MiB again: 1603 MB/s against 4279 at 2 MiB on the H200 (2026-11-27). Blocks in excess
// of what their size needed at once in the last two windows (a window ends when no block is out;
// not while a trim is queued) go first: the first trim here still sees the 1 KiB blocks' last
// window and frees a 2 KiB block, the second frees the 1 KiB ones, and from the third iteration on
// the 2 KiB blocks all come from the cache (before: never).
TEST(BufferPool, AGrowingSizeGivesUpTheSizesItLeftBehind) {
  mcrp::device::release_cached_buffers();
  for (int iteration = 0; iteration < 3; ++iteration) {
    Buffer first, second;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1024, first).ok());
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1024, second).ok());
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 2048u);
  for (int iteration = 0; iteration < 5; ++iteration) {
    settled_cached(BufferKind::pinned_host);  // the last iteration's trim done
    Buffer first, second;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, first).ok());
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 2048, second).ok());
    if (iteration >= 2) {
      EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 0u)
          << "iteration " << iteration << ": both 2 KiB blocks should have come from the cache, and no 1 KiB block stayed";
    }
  }
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 4096u);
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

// While the gate is shut (NCCL work in flight, device/quiet_work.h) no block is freed, and a
// block past the limit stays reusable instead of being replaced by a new allocation; blocks that
// abandoned work may use wait too. Once the gate opens, the cache is trimmed to its limit.
std::atomic<bool> g_gate_open{true};
std::atomic<int> g_gate_refusals{0};

bool test_gate(const std::function<void()>& work) {
  if (!g_gate_open.load()) {
    g_gate_refusals.fetch_add(1);
    return false;
  }
  work();
  return true;
}

void wait_for_refusal() {
  const int before = g_gate_refusals.load();
  for (int i = 0; i < 2000 && g_gate_refusals.load() == before; ++i) usleep(1000);
}

TEST(BufferPool, NothingIsFreedWhileTheGateIsShut) {
  mcrp::device::release_cached_buffers();
  {
    Buffer cached;  // pinned blocks are allocated only while the gate is open: one for later
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, cached).ok());
  }
  mcrp::device::set_quiet_gate(&test_gate);
  g_gate_open = false;
  char* first = nullptr;
  {
    Buffer big;  // past the 1 MiB device limit
    ASSERT_TRUE(acquire(BufferKind::device, 0, 2u << 20, big).ok());
    first = big.data();
  }
  wait_for_refusal();
  EXPECT_EQ(pool_usage(BufferKind::device).cached, 2u << 20);
  {
    Buffer again;
    ASSERT_TRUE(acquire(BufferKind::device, 0, 2u << 20, again).ok());
    EXPECT_EQ(again.data(), first);  // the same block, not a new allocation
  }
  {
    Buffer abandoned;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, abandoned).ok());
    mcrp::device::note_abandoned_work();
  }
  wait_for_refusal();
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).freeing, 1024u);  // not reusable, not freed yet
  g_gate_open = true;
  EXPECT_EQ(settled_cached(BufferKind::device), 0u);
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).freeing, 0u);
  EXPECT_EQ(pool_usage(BufferKind::device).freeing, 0u);
  mcrp::device::set_quiet_gate(nullptr);
}

// While the gate is shut no pinned block is allocated either (cudaMallocHost may wait for the whole
// device, quiet_work.h): a request the cache cannot serve gets a larger idle block, else pageable
// memory, and a pinned block of its size is allocated once the gate opens.
TEST(BufferPool, NoPinnedAllocationWhileTheGateIsShut) {
  mcrp::device::release_cached_buffers();
  mcrp::device::set_quiet_gate(&test_gate);
  g_gate_open = false;
  const std::size_t pageable_before = pool_usage(BufferKind::pinned_host).pageable_blocks;
  {
    Buffer stand_in;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, stand_in).ok());
    ASSERT_NE(stand_in.data(), nullptr);
    stand_in.data()[999] = 1;
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).pageable_blocks, pageable_before + 1);
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 1024u);
  }
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 0u);
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 0u);  // a pageable block is never pooled
  wait_for_refusal();
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 0u);  // nor is the warm-up run while shut
  g_gate_open = true;
  EXPECT_EQ(settled_cached(BufferKind::pinned_host), 1024u);  // warmed at the quiet moment
  g_gate_open = false;
  char* warmed = nullptr;
  {
    Buffer pinned;
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 1000, pinned).ok());
    warmed = pinned.data();
  }
  {
    Buffer smaller;  // its own shelf (256 B) is empty: the idle 1024 B block serves
    ASSERT_TRUE(acquire(BufferKind::pinned_host, -1, 200, smaller).ok());
    EXPECT_EQ(smaller.data(), warmed);
    EXPECT_EQ(pool_usage(BufferKind::pinned_host).in_use, 1024u);
  }
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).pageable_blocks, pageable_before + 1);
  EXPECT_EQ(pool_usage(BufferKind::pinned_host).cached, 1024u);  // back on its own shelf
  g_gate_open = true;
  mcrp::device::set_quiet_gate(nullptr);
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
