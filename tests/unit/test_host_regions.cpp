// The memory that detection calls host without asking CUDA (device/host_regions.h): each region it
// claims must be host, and nothing else may be claimed -- mmap'd memory, another thread's stack, a
// stack the threads library does not know (a fiber), addresses past the program break.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "device/host_regions.h"

namespace {

using mcrp::device::in_lasting_host_memory;

int g_program_data[64];  // .bss of the main program

struct Mapping {
  explicit Mapping(std::size_t bytes) : size(bytes) {
    address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() {
    if (address != MAP_FAILED) munmap(address, size);
  }
  void* address;
  std::size_t size;
};

TEST(HostRegions, StackOfThisThread) {
  int local = 0;
  EXPECT_TRUE(in_lasting_host_memory(&local));
}

TEST(HostRegions, BrkHeap) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator does not use the brk heap";
#endif
  // Small blocks of the main thread come from the brk heap (glibc's main arena).
  std::unique_ptr<char[]> small(new char[64]);
  const mcrp::device::AddressRange heap = mcrp::device::brk_heap();
  ASSERT_LT(heap.begin, heap.end) << "no brk heap found (/proc/self/stat)";
  EXPECT_TRUE(heap.contains(reinterpret_cast<std::uintptr_t>(small.get())));
  EXPECT_TRUE(in_lasting_host_memory(small.get()));
  // Past the current break nothing is heap.
  EXPECT_FALSE(heap.contains(heap.end));
  EXPECT_FALSE(in_lasting_host_memory(static_cast<char*>(sbrk(0)) + 4096));
}

// brk_heap reads the break without a system call (glibc's __curbrk): it must still be the kernel's
// break after the heap grows and shrinks, also with UCX's memory hooks (which replace sbrk) loaded.
TEST(HostRegions, BreakIsTheKernels) {
  const auto kernel_break = [] { return static_cast<std::uintptr_t>(syscall(SYS_brk, 0)); };
  EXPECT_EQ(mcrp::device::brk_heap().end, kernel_break());
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 20000; ++i) blocks.emplace_back(new char[200 + i % 300]);
  EXPECT_EQ(mcrp::device::brk_heap().end, kernel_break()) << "after the heap grew";
  blocks.clear();
  malloc_trim(0);
  EXPECT_EQ(mcrp::device::brk_heap().end, kernel_break()) << "after malloc_trim";
  void* before = sbrk(1 << 20);
  ASSERT_NE(before, reinterpret_cast<void*>(-1));
  EXPECT_EQ(mcrp::device::brk_heap().end, kernel_break()) << "after sbrk(+1 MiB)";
  sbrk(-(1 << 20));
  EXPECT_EQ(mcrp::device::brk_heap().end, kernel_break()) << "after sbrk(-1 MiB)";
}

TEST(HostRegions, MainProgramData) {
  EXPECT_TRUE(in_lasting_host_memory(&g_program_data[0]));
  EXPECT_TRUE(in_lasting_host_memory(&g_program_data[63]));
}

TEST(HostRegions, MappedMemoryIsLeftToTheDriver) {
  // Freed mappings can come back as anything, device memory included: never claimed.
  Mapping mapping(1 << 20);
  ASSERT_NE(mapping.address, MAP_FAILED);
  EXPECT_FALSE(in_lasting_host_memory(mapping.address));
  EXPECT_FALSE(in_lasting_host_memory(static_cast<char*>(mapping.address) + (1 << 19)));
}

TEST(HostRegions, NullAndHighAddresses) {
  EXPECT_FALSE(in_lasting_host_memory(nullptr));
  EXPECT_FALSE(in_lasting_host_memory(reinterpret_cast<void*>(~std::uintptr_t{0})));  // MPI_IN_PLACE in MPICH
}

TEST(HostRegions, AnotherThreadsStackOnlyFromThatThread) {
  const void* their_local = nullptr;
  bool seen_there = false;
  std::thread worker([&] {
    int local = 0;
    their_local = &local;
    seen_there = in_lasting_host_memory(&local);
    // Keep the frame alive until the main thread has looked (joined below, after the check there
    // would race: so check the other direction from here instead).
  });
  worker.join();
  EXPECT_TRUE(seen_there);
  // The worker's stack is gone (or cached for reuse by the threads library): not claimed here.
  EXPECT_FALSE(in_lasting_host_memory(their_local));
}

// The main thread's bounds are kept apart from the other threads' (no thread-local access on its
// calls): they must still be the main thread's alone.
TEST(HostRegions, MainThreadsStackNotClaimedFromAnotherThread) {
  int local = 0;
  ASSERT_TRUE(in_lasting_host_memory(&local));  // gtest runs tests on the main thread
  bool seen_from_worker = true;
  std::thread worker([&] { seen_from_worker = in_lasting_host_memory(&local); });
  worker.join();
  EXPECT_FALSE(seen_from_worker);
}

// A fiber on an mmap'd stack: its frames lie outside the thread's known stack, so nothing of it is
// claimed (and the thread's own stack range is not stretched over unrelated mappings).
ucontext_t g_main_context, g_fiber_context;
bool g_fiber_local_claimed = true;
bool g_thread_range_empty = false;

void fiber_body() {
  int local = 0;
  g_fiber_local_claimed = in_lasting_host_memory(&local);
  const mcrp::device::AddressRange range = mcrp::device::live_stack_of_this_thread();
  g_thread_range_empty = range.begin == range.end;
  swapcontext(&g_fiber_context, &g_main_context);
}

TEST(HostRegions, FiberStackIsNotClaimed) {
  Mapping stack(256 * 1024);
  ASSERT_NE(stack.address, MAP_FAILED);
  ASSERT_EQ(getcontext(&g_fiber_context), 0);
  g_fiber_context.uc_stack.ss_sp = stack.address;
  g_fiber_context.uc_stack.ss_size = stack.size;
  g_fiber_context.uc_link = &g_main_context;
  makecontext(&g_fiber_context, fiber_body, 0);
  ASSERT_EQ(swapcontext(&g_main_context, &g_fiber_context), 0);
  EXPECT_FALSE(g_fiber_local_claimed);
  EXPECT_TRUE(g_thread_range_empty);
}

}  // namespace
