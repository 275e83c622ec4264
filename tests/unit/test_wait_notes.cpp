// What the timeout report reads (runtime/state_report.h): the threads' wait notes and the launch
// lock's holder.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "runtime/launch_lock.h"
#include "runtime/thread_id.h"
#include "runtime/wait_notes.h"

namespace mcrp {
namespace {

const ThreadWait* find_thread(const std::vector<ThreadWait>& waits, int thread) {
  for (const ThreadWait& wait : waits) {
    if (wait.thread == thread) return &wait;
  }
  return nullptr;
}

TEST(WaitNotes, AThreadIsListedWhileItsOutermostWaitLasts) {
  const auto* comm = reinterpret_cast<const NcclComm*>(0x1000);
  EXPECT_EQ(find_thread(threads_waiting(), this_thread_id()), nullptr);
  {
    WaitNote outer("the outer wait", comm, std::chrono::steady_clock::now() - std::chrono::seconds(2));
    {
      WaitNote inner("an inner wait", nullptr);  // the outer one stays what the report shows
      const std::vector<ThreadWait> waits = threads_waiting();
      const ThreadWait* mine = find_thread(waits, this_thread_id());
      ASSERT_NE(mine, nullptr);
      EXPECT_EQ(mine->what, "the outer wait");
      EXPECT_EQ(mine->comm, comm);
      EXPECT_GE(mine->seconds, 2.0);
      EXPECT_LT(mine->seconds, 60.0);
    }
    EXPECT_NE(find_thread(threads_waiting(), this_thread_id()), nullptr);  // the inner end keeps it
  }
  EXPECT_EQ(find_thread(threads_waiting(), this_thread_id()), nullptr);
}

TEST(WaitNotes, OtherThreadsAreListedLongestFirstAndLeaveWhenTheyEnd) {
  std::atomic<int> noted{0};
  std::atomic<bool> release{false};
  std::atomic<int> ids[2] = {{0}, {0}};
  auto waiter = [&](int index, int seconds_ago) {
    ids[index] = this_thread_id();
    WaitNote note(index == 0 ? "the first" : "the second", nullptr,
                  std::chrono::steady_clock::now() - std::chrono::seconds(seconds_ago));
    ++noted;
    while (!release) std::this_thread::yield();
  };
  std::thread first(waiter, 0, 5), second(waiter, 1, 10);
  while (noted < 2) std::this_thread::yield();
  const std::vector<ThreadWait> waits = threads_waiting();
  ASSERT_GE(waits.size(), 2u);
  EXPECT_EQ(waits[0].thread, ids[1].load());  // waiting longer: first
  EXPECT_EQ(waits[0].what, "the second");
  EXPECT_EQ(waits[1].thread, ids[0].load());
  EXPECT_NE(ids[0].load(), ids[1].load());
  release = true;
  first.join();
  second.join();
  const std::vector<ThreadWait> after = threads_waiting();
  EXPECT_EQ(find_thread(after, ids[0]), nullptr);
  EXPECT_EQ(find_thread(after, ids[1]), nullptr);
}

TEST(LaunchLock, NamesItsHolderAndKeepsOthersOut) {
  EXPECT_EQ(launch_lock_holder().thread, 0);
  {
    NcclLaunchLock lock;
    EXPECT_EQ(launch_lock_holder().thread, this_thread_id());
    EXPECT_GE(launch_lock_holder().seconds, 0.0);
    bool other_got_it = true;
    std::thread other([&] {
      NcclLaunchLock attempt(std::try_to_lock);
      other_got_it = attempt.owns_lock();
    });
    other.join();
    EXPECT_FALSE(other_got_it);
    EXPECT_EQ(launch_lock_holder().thread, this_thread_id());  // a failed attempt changes nothing
  }
  EXPECT_EQ(launch_lock_holder().thread, 0);
  NcclLaunchLock attempt(std::try_to_lock);
  EXPECT_TRUE(attempt.owns_lock());
}

// What the notes and the lock's bookkeeping add to a blocking NCCL call (one of each), printed
// beside a bare mutex's lock and unlock, which the launch lock was before.
template <typename Body>
double fastest_ns_per_call(Body body) {
  constexpr int kRounds = 7, kCalls = 200000;
  double best_ns = 1e9;
  for (int round = 0; round < kRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) body(start);
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kCalls;
    best_ns = std::min(best_ns, ns);
  }
  return best_ns;
}

TEST(LaunchLock, CostOfTheBookkeepingPerCall) {
  std::mutex bare;
  const double before =
      fastest_ns_per_call([&](std::chrono::steady_clock::time_point) { std::lock_guard<std::mutex> lock(bare); });
  const double now = fastest_ns_per_call([](std::chrono::steady_clock::time_point start) {
    WaitNote note("a blocking NCCL call", nullptr, start);
    NcclLaunchLock lock;
  });
  std::printf(
      "a wait note and a launch lock taken and released: %.1f ns; a bare mutex: %.1f ns (fastest of 7 rounds of "
      "200,000)\n",
      now, before);
  EXPECT_LT(now, 10000.0);  // a sanity bound only: speed goals live in benchmarks
}

}  // namespace
}  // namespace mcrp
