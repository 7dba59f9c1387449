// SideTask: every function runs exactly once, on a helper or on its caller's
// thread, and Join returns only after it ran.
#include "engine/side_task.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

TEST(SideTaskTest, RunsOnceAndJoinWaitsForIt) {
  SideHelpers helpers(2);
  for (int i = 0; i < 200; ++i) {
    std::atomic<int> runs{0};
    int value = 0;
    SideTask t(&helpers, [&] {
      value = i;
      ++runs;
    });
    t.Join();
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(value, i);  // written before Join returned
  }
}

TEST(SideTaskTest, RunsOnTheCallerWhenEveryHelperIsBusy) {
  SideHelpers helpers(1);
  std::atomic<bool> release{false};
  std::atomic<bool> busy_started{false};
  SideTask busy(&helpers, [&] {
    busy_started = true;
    while (!release) std::this_thread::yield();
  });
  // The one helper is taken (or, if it never took `busy`, `busy` runs on
  // this thread at its Join below): either way `second` cannot wait for it.
  std::thread::id ran_on;
  SideTask second(&helpers, [&] { ran_on = std::this_thread::get_id(); });
  if (busy_started) {
    second.Join();
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  }
  release = true;
  busy.Join();
  second.Join();
}

TEST(SideTaskTest, ManyCallersEachGetTheirOwnResult) {
  SideHelpers helpers(2);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < 500; ++i) {
        int got = -1;
        {
          SideTask t(&helpers, [&] { got = c * 1000 + i; });
        }  // the destructor joins
        if (got != c * 1000 + i) ++wrong;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace neodb::engine
