// What the timeout report reads (runtime/state_report.h): the threads' wait notes and the launch
// lock's holder.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/launch_lock.h"
#include "runtime/state_report.h"
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
    outer.note_now();
    {
      WaitNote inner("an inner wait", nullptr);  // the outer one stays what the report shows
      inner.note_now();
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

// A polling wait is noted at its 64th poll, not before, with the time it began if given, and
// the polls of an inner wait leave the outer one's note alone.
TEST(WaitNotes, APollingWaitIsNotedAtItsSixtyFourthPoll) {
  const auto start = std::chrono::steady_clock::now() - std::chrono::seconds(4);
  {
    WaitNote outer("a polling wait", nullptr, start);
    for (unsigned poll = 1; poll < WaitNote::kPollsBetweenChecks; ++poll) {
      EXPECT_FALSE(outer.polled()) << poll;
    }
    EXPECT_EQ(find_thread(threads_waiting(), this_thread_id()), nullptr);  // 63 polls: nothing noted
    EXPECT_TRUE(outer.polled());
    const std::vector<ThreadWait> waits = threads_waiting();
    const ThreadWait* mine = find_thread(waits, this_thread_id());
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(mine->what, "a polling wait");
    EXPECT_GE(mine->seconds, 4.0);  // since the given start, not since the note
    {
      WaitNote inner("an inner polling wait", nullptr);
      for (unsigned poll = 1; poll <= 2 * WaitNote::kPollsBetweenChecks; ++poll) inner.polled();
      const std::vector<ThreadWait> inside = threads_waiting();
      ASSERT_NE(find_thread(inside, this_thread_id()), nullptr);
      EXPECT_EQ(find_thread(inside, this_thread_id())->what, "a polling wait");
    }
    EXPECT_NE(find_thread(threads_waiting(), this_thread_id()), nullptr);  // the inner end keeps it
    for (unsigned poll = 1; poll < WaitNote::kPollsBetweenChecks; ++poll) outer.polled();
    EXPECT_TRUE(outer.polled());  // every 64th poll says so, noted or not
  }
  EXPECT_EQ(find_thread(threads_waiting(), this_thread_id()), nullptr);
  {
    WaitNote unstarted("a wait with no start given", nullptr);
    unstarted.note_now();
    const std::vector<ThreadWait> waits = threads_waiting();
    const ThreadWait* mine = find_thread(waits, this_thread_id());
    ASSERT_NE(mine, nullptr);
    EXPECT_LT(mine->seconds, 1.0);  // since the note
  }
}

TEST(WaitNotes, OtherThreadsAreListedLongestFirstAndLeaveWhenTheyEnd) {
  std::atomic<int> noted{0};
  std::atomic<bool> release{false};
  std::atomic<int> ids[2] = {{0}, {0}};
  auto waiter = [&](int index, int seconds_ago) {
    ids[index] = this_thread_id();
    WaitNote note(index == 0 ? "the first" : "the second", nullptr,
                  std::chrono::steady_clock::now() - std::chrono::seconds(seconds_ago));
    note.note_now();
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
  WaitNote("a registration", nullptr).note_now();
  EXPECT_EQ(thread_id_of(pthread_self()), this_thread_id());
  EXPECT_TRUE(pthread_equal(watch_launch_lock(0).holder, pthread_t{}));
  {
    NcclLaunchLock lock;
    LaunchLockWatch seen;
    bool other_got_it = true;
    std::thread other([&] {
      seen = watch_launch_lock(50);
      NcclLaunchLock attempt(std::try_to_lock);
      other_got_it = attempt.owns_lock();
    });
    other.join();
    EXPECT_TRUE(pthread_equal(seen.holder, pthread_self()));
    EXPECT_TRUE(seen.held_throughout);
    EXPECT_FALSE(other_got_it);
    EXPECT_TRUE(pthread_equal(watch_launch_lock(0).holder, pthread_self()));  // a refused attempt changes nothing
  }
  EXPECT_TRUE(pthread_equal(watch_launch_lock(0).holder, pthread_t{}));
  NcclLaunchLock attempt(std::try_to_lock);
  EXPECT_TRUE(attempt.owns_lock());
}

TEST(LaunchLock, AWatchSeesANewTaking) {
  std::atomic<bool> watching{false};
  LaunchLockWatch seen;
  auto lock = std::make_unique<NcclLaunchLock>();
  std::thread watcher([&] {
    watching = true;
    seen = watch_launch_lock(300);
  });
  while (!watching) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  lock.reset();
  lock = std::make_unique<NcclLaunchLock>();  // the same thread takes it again within the watch
  watcher.join();
  EXPECT_TRUE(pthread_equal(seen.holder, pthread_self()));
  EXPECT_FALSE(seen.held_throughout);
}

// The report itself, asked for while this thread holds the launch lock and waits: no MPI, no NCCL
// communicator in this process.
TEST(StateReport, NamesTheLockHolderAndTheWaits) {
  WaitNote note("a unit test's wait", nullptr, std::chrono::steady_clock::now() - std::chrono::seconds(3));
  note.note_now();
  NcclLaunchLock lock;
  testing::internal::CaptureStderr();
  mcrpmpi_report_state("unit test");
  const std::string report = testing::internal::GetCapturedStderr();
  const std::string me = std::to_string(this_thread_id());
  EXPECT_NE(report.find("mcrpmpi: pid "), std::string::npos) << report;  // no world rank: MPI never initialised
  EXPECT_NE(report.find(": unit test; the library's state now:\n"), std::string::npos) << report;
  EXPECT_NE(report.find("mcrpmpi: NCCL launch lock: held by thread " + me + " (this one) (pthread 0x"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(", the same taking through the report's 100 ms watch\n"), std::string::npos) << report;
  EXPECT_NE(report.find("mcrpmpi: no NCCL communicator\n"), std::string::npos) << report;
  EXPECT_NE(report.find("mcrpmpi: thread " + me + " (this one): waiting 3."), std::string::npos) << report;
  EXPECT_NE(report.find(" for a unit test's wait\n"), std::string::npos) << report;
  EXPECT_NE(report.find("mcrpmpi: library requests in flight: none"), std::string::npos) << report;
}

// What the launch lock's bookkeeping adds to every NCCL launch, printed beside the bare mutex's lock
// and unlock, which the launch lock was before, and a wait note's cost when it is taken (the library's
// waits take theirs at their 64th poll only).
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
  const double mutex_ns =
      fastest_ns_per_call([&](std::chrono::steady_clock::time_point) { std::lock_guard<std::mutex> lock(bare); });
  const double lock_ns = fastest_ns_per_call([](std::chrono::steady_clock::time_point) { NcclLaunchLock lock; });
  const double note_ns = fastest_ns_per_call(
      [](std::chrono::steady_clock::time_point start) { WaitNote("a blocking NCCL call", nullptr, start).note_now(); });
  std::printf(
      "launch lock taken and released: %.1f ns, a bare mutex: %.1f ns; a wait note: %.1f ns "
      "(fastest of 7 rounds of 200,000)\n",
      lock_ns, mutex_ns, note_ns);
  EXPECT_LT(lock_ns, 10000.0);  // a sanity bound only: speed goals live in benchmarks
}

}  // namespace
}  // namespace mcrp
