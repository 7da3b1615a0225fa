#include "base/task_thread.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

namespace {

using cws::base::task_thread;

TEST(task_thread, runs_tasks_in_order_on_its_own_thread) {
  task_thread t;
  std::vector<int> seen; // touched by the task thread only until the promise is set
  std::thread::id where;
  std::promise<void> done;
  for (int i = 0; i < 100; ++i) {
    t.post([&seen, i] { seen.push_back(i); });
  }
  t.post([&] {
    where = std::this_thread::get_id();
    done.set_value();
  });
  done.get_future().wait();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(seen[static_cast<size_t>(i)], i);
  }
  EXPECT_NE(where, std::this_thread::get_id());
}

TEST(task_thread, stop_runs_what_was_posted_and_refuses_the_rest) {
  std::vector<int> seen;
  {
    task_thread t;
    std::promise<void> release;
    auto gate = release.get_future().share();
    t.post([gate] { gate.wait(); }); // holds the thread while more are queued
    for (int i = 0; i < 10; ++i) {
      t.post([&seen, i] { seen.push_back(i); });
    }
    std::thread stopper([&t] { t.stop(); });
    release.set_value();
    stopper.join();
    t.post([&seen] { seen.push_back(-1); }); // after stop: never runs
    t.stop();                                // idempotent
  }
  ASSERT_EQ(seen.size(), 10u);
  EXPECT_EQ(seen.back(), 9);
}

} // namespace
