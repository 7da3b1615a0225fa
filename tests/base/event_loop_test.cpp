// base::event_loop alone: posts from other threads, fd readiness, deadlines, stop.

#include <gtest/gtest.h>

#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/event_loop.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::event_loop;

/// Waits until `pred` holds (at most 5 s).
template<class Pred>
bool eventually(Pred pred) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) {
      return false;
    }
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(event_loop, posts_from_many_threads_all_run_on_the_loop_in_order_per_thread) {
  std::vector<int> seen[4];
  std::atomic<int> wrong_thread{0};
  std::atomic<int> count{0};
  event_loop loop{{}};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 1000; ++i) {
        loop.post([&, k, i] {
          wrong_thread += loop.in_loop() ? 0 : 1;
          seen[k].push_back(i); // loop thread only: no lock
          ++count;
        });
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  ASSERT_TRUE(eventually([&] { return count == 4000; }));
  loop.stop();
  EXPECT_EQ(wrong_thread, 0);
  EXPECT_FALSE(loop.in_loop());
  for (auto& s : seen) {
    ASSERT_EQ(s.size(), 1000u);
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  }
}

TEST(event_loop, a_watched_fd_is_reported_under_its_key_until_unwatched) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  std::atomic<uint64_t> key{0};
  std::atomic<int> reports{0};
  event_loop::handlers h;
  h.ready = [&](uint64_t k, uint32_t ev) {
    if (ev & EPOLLIN) {
      char c;
      (void)!::read(p[0], &c, 1);
      key = k;
      ++reports;
    }
  };
  event_loop loop{h};
  loop.post([&] { loop.watch(p[0], EPOLLIN, 42); });
  ASSERT_EQ(::write(p[1], "x", 1), 1);
  ASSERT_TRUE(eventually([&] { return reports == 1; }));
  EXPECT_EQ(key, 42u);
  std::atomic<bool> unwatched{false};
  loop.post([&] {
    loop.unwatch(p[0]);
    unwatched = true;
  });
  ASSERT_TRUE(eventually([&] { return unwatched.load(); }));
  ASSERT_EQ(::write(p[1], "y", 1), 1);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(reports, 1);
  loop.stop();
  ::close(p[0]);
  ::close(p[1]);
}

TEST(event_loop, deadlines_fire_in_time_order_and_a_cleared_one_never) {
  std::mutex mu;
  std::vector<uint64_t> fired;
  event_loop::handlers h;
  h.deadline = [&](uint64_t key) {
    std::lock_guard<std::mutex> g{mu};
    fired.push_back(key);
  };
  event_loop loop{h};
  auto t0 = std::chrono::steady_clock::now();
  loop.post([&] {
    loop.set_deadline(3, t0 + 60ms);
    loop.set_deadline(1, t0 + 20ms);
    loop.set_deadline(2, t0 + 40ms);
    loop.set_deadline(9, t0 + 30ms);
    loop.clear_deadline(9);
  });
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> g{mu};
    return fired.size() == 3;
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 60ms);
  std::this_thread::sleep_for(20ms);
  std::lock_guard<std::mutex> g{mu};
  EXPECT_EQ(fired, (std::vector<uint64_t>{1, 2, 3}));
}

TEST(event_loop, the_turn_hook_bounds_the_sleep) {
  std::atomic<int> turns{0};
  event_loop::handlers h;
  h.turn = [&]() -> std::optional<event_loop::clock::time_point> {
    ++turns;
    return event_loop::clock::now() + 5ms;
  };
  event_loop loop{h};
  // with nothing else to do, the hook's time still wakes the loop
  EXPECT_TRUE(eventually([&] { return turns > 5; }));
}

TEST(event_loop, stop_runs_what_was_posted_then_stopped_and_later_posts_are_refused) {
  std::vector<std::string> order;
  event_loop::handlers h;
  event_loop* self = nullptr;
  h.stopped = [&] {
    order.push_back("stopped");
    // a follow-up posted while stopping still runs
    self->post([&] { order.push_back("follow-up"); });
  };
  auto loop = std::make_unique<event_loop>(h);
  self = loop.get();
  std::atomic<bool> release{false};
  loop->post([&] {
    while (!release) {
      std::this_thread::sleep_for(1ms);
    }
    order.push_back("first");
  });
  loop->post([&] { order.push_back("second"); });
  std::thread stopper([&] { loop->stop(); });
  std::this_thread::sleep_for(20ms);
  release = true;
  stopper.join();
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "stopped", "follow-up"}));
  EXPECT_FALSE(loop->post([] {}));
  loop.reset(); // a second stop: nothing happens
}

} // namespace
