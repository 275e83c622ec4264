// The side thread of a blocking NCCL communicator (runtime/nccl_side_thread.h): jobs run off the
// caller one at a time, their results are read once they end, and a job still running when its owner
// goes away keeps the thread, which then runs what the owner left for it (the communicator's abort).
#include "runtime/nccl_side_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using namespace std::chrono_literals;

bool ends_within(const mcrp::NcclSideThread& side, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (side.busy()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(NcclSideThread, RunsJobsOffTheCallerOneAfterAnother) {
  mcrp::NcclSideThread side;
  EXPECT_FALSE(side.busy());
  std::atomic<bool> release{false};
  std::thread::id ran_on;
  side.start([&] {
    ran_on = std::this_thread::get_id();
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return ncclInProgress;  // any result: it is handed back as is
  });
  EXPECT_TRUE(side.busy());  // the job waits for release: start() did not run it here
  release = true;
  ASSERT_TRUE(ends_within(side, 10s));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(side.result(), ncclInProgress);
  side.start([] { return ncclRemoteError; });
  ASSERT_TRUE(ends_within(side, 10s));
  EXPECT_EQ(side.result(), ncclRemoteError);
}

TEST(NcclSideThread, AnAbandonedJobRunsWhatWasLeftOnceItEnds) {
  std::atomic<bool> release{false}, abandoned_ran{false};
  {
    mcrp::NcclSideThread side;
    side.start([&] {
      while (!release.load()) std::this_thread::sleep_for(1ms);
      return ncclSuccess;
    });
    side.abandon([&] { abandoned_ran = true; });
  }  // destroyed with the job running: does not wait for it
  EXPECT_FALSE(abandoned_ran.load());
  release = true;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!abandoned_ran.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(abandoned_ran.load());
}

TEST(NcclSideThread, AbandoningAnIdleThreadRunsItAtOnce) {
  bool ran = false;
  mcrp::NcclSideThread side;
  side.abandon([&] { ran = true; });  // never started: nothing to wait for
  EXPECT_TRUE(ran);
  side.start([] { return ncclSuccess; });
  ASSERT_TRUE(ends_within(side, 10s));
  ran = false;
  side.abandon([&] { ran = true; });
  EXPECT_TRUE(ran);
}

}  // namespace
