// base::fanout_run and base::run_registry alone: the end contract (every job one result,
// then on_done once) under finish, cancel, stop and destruction, and the fanout bound.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/fanout.hpp"

namespace {

using cws::base::fanout_run;
using cws::base::node_errc;
using cws::base::node_result;
using cws::base::run_registry;

/// What a run delivered.
struct tally {
  std::mutex mu;
  std::vector<int> results;
  std::vector<node_result> last;
  int done = 0;
  /// Results that came after on_done (must stay 0).
  int late = 0;

  explicit tally(size_t jobs) : results(jobs), last(jobs) {
    // nop
  }

  std::shared_ptr<fanout_run> run(size_t fanout) {
    std::vector<std::string> names;
    for (size_t i = 0; i < results.size(); ++i) {
      names.push_back("n" + std::to_string(i));
    }
    return std::make_shared<fanout_run>(
      results.size(), fanout,
      [this](size_t i, node_result r) {
        std::lock_guard<std::mutex> g{mu};
        late += done;
        ++results.at(i);
        last.at(i) = std::move(r);
      },
      [this] {
        std::lock_guard<std::mutex> g{mu};
        ++done;
      },
      cws::base::node_failures(std::move(names)));
  }

  void expect_kept() {
    std::lock_guard<std::mutex> g{mu};
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i], 1) << "job " << i;
    }
    EXPECT_EQ(done, 1);
    EXPECT_EQ(late, 0);
  }
};

node_result ok() {
  node_result r;
  r.rc = 0;
  return r;
}

TEST(fanout_run, jobs_start_in_order_within_the_fanout_and_end_with_on_done) {
  tally t{5};
  auto run = t.run(2);
  auto a = run->next_to_start();
  auto b = run->next_to_start();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, 1u);
  EXPECT_FALSE(run->next_to_start()); // both slots held
  EXPECT_EQ(run->running(), 2u);
  EXPECT_TRUE(run->finished(1, ok()));
  EXPECT_EQ(run->next_to_start(), 2u); // the freed slot
  EXPECT_FALSE(run->next_to_start());
  for (size_t i : {0u, 2u}) {
    EXPECT_TRUE(run->finished(i, ok()));
  }
  while (auto i = run->next_to_start()) {
    EXPECT_TRUE(run->finished(*i, ok()));
  }
  EXPECT_TRUE(run->done());
  t.expect_kept();
}

TEST(fanout_run, a_second_result_for_a_job_is_dropped) {
  tally t{1};
  auto run = t.run(1);
  ASSERT_EQ(run->next_to_start(), 0u);
  EXPECT_TRUE(run->finished(0, ok()));
  EXPECT_FALSE(run->finished(0, ok()));
  EXPECT_FALSE(run->finished(7, ok())); // no such job
  t.expect_kept();
}

TEST(fanout_run, no_jobs_means_on_done_at_once) {
  tally t{0};
  auto run = t.run(4);
  EXPECT_TRUE(run->done());
  EXPECT_FALSE(run->next_to_start());
  t.expect_kept();
}

TEST(fanout_run, cancel_ends_the_unstarted_jobs_and_the_running_one_reports_itself) {
  tally t{4};
  auto run = t.run(1);
  ASSERT_EQ(run->next_to_start(), 0u);
  EXPECT_TRUE(run->request_cancel());
  EXPECT_FALSE(run->next_to_start()); // nothing starts after a cancel
  run->end_unstarted(node_errc::cancelled, cws::base::node_message::cancelled_unstarted);
  EXPECT_FALSE(run->done()); // job 0 runs
  auto r = ok();
  r.error = "cancelled";
  EXPECT_TRUE(run->finished(0, r));
  t.expect_kept();
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(t.last[i].error, "cancelled");
    EXPECT_EQ(t.last[i].name, "n" + std::to_string(i));
    EXPECT_EQ(t.last[i].message, "The request was cancelled before it started.");
  }
}

TEST(fanout_run, stop_ends_running_and_unstarted_jobs_and_drops_late_results) {
  tally t{3};
  auto run = t.run(2);
  ASSERT_EQ(run->next_to_start(), 0u);
  ASSERT_EQ(run->next_to_start(), 1u);
  run->end_all(node_errc::disconnected, cws::base::node_message::stopping);
  EXPECT_FALSE(run->finished(0, ok())); // the blocked call came back after the stop
  t.expect_kept();
  EXPECT_EQ(t.last[0].error, "disconnected");
  EXPECT_EQ(t.last[2].error, "disconnected");
}

TEST(fanout_run, a_run_destroyed_before_its_end_still_keeps_the_contract) {
  tally t{3};
  {
    auto run = t.run(1);
    ASSERT_EQ(run->next_to_start(), 0u);
    EXPECT_TRUE(run->finished(0, ok()));
    ASSERT_EQ(run->next_to_start(), 1u);
  }
  t.expect_kept();
  EXPECT_EQ(t.last[0].error, "");
  EXPECT_EQ(t.last[1].error, "disconnected");
  EXPECT_EQ(t.last[2].error, "disconnected");
}

TEST(fanout_run, a_callback_may_end_other_jobs_and_on_done_still_comes_last) {
  tally t{3};
  std::shared_ptr<fanout_run> run;
  bool ended_others = false;
  std::vector<std::string> names{"a", "b", "c"};
  run = std::make_shared<fanout_run>(
    3, 1,
    [&](size_t i, node_result r) {
      t.results.at(i) += 1;
      t.late += t.done;
      if (!ended_others) {
        ended_others = true;
        run->end_unstarted(node_errc::cancelled, "x"); // from inside a callback
      }
      (void)r;
    },
    [&] { ++t.done; }, cws::base::node_failures(names));
  ASSERT_EQ(run->next_to_start(), 0u);
  EXPECT_TRUE(run->finished(0, ok()));
  t.expect_kept();
}

TEST(fanout_run, many_threads_never_exceed_the_fanout_and_each_job_ends_once) {
  constexpr size_t jobs = 2000;
  constexpr size_t fanout = 8;
  tally t{jobs};
  auto run = t.run(fanout);
  std::atomic<size_t> max_running{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&] {
      while (!run->done()) {
        if (auto i = run->next_to_start()) {
          auto now = run->running();
          auto seen = max_running.load();
          while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
          }
          run->finished(*i, ok());
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_LE(max_running.load(), fanout);
  t.expect_kept();
}

TEST(run_registry, cancel_finds_a_live_run_once_it_has_ended_nothing) {
  run_registry reg;
  tally t{2};
  auto run = t.run(1);
  auto id = reg.add(run);
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(run->id(), id);
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg.cancel(99), nullptr);
  auto found = reg.cancel(id);
  ASSERT_EQ(found, run);
  EXPECT_TRUE(run->cancel_requested());
  run->end_unstarted(node_errc::cancelled, "c");
  EXPECT_TRUE(run->done());
  EXPECT_EQ(reg.cancel(id), nullptr);
  EXPECT_EQ(reg.size(), 0u);
  t.expect_kept();
}

TEST(run_registry, cancel_all_hands_over_every_live_run_for_a_stop) {
  run_registry reg;
  tally a{2}, b{2}, c{1};
  auto ra = a.run(1);
  auto rb = b.run(1);
  auto rc = c.run(1);
  reg.add(ra);
  reg.add(rb);
  reg.add(rc);
  ASSERT_EQ(rc->next_to_start(), 0u);
  rc->finished(0, ok()); // ended: not handed over
  auto all = reg.cancel_all();
  EXPECT_EQ(all.size(), 2u);
  for (auto& r : all) {
    r->end_all(node_errc::disconnected, "stop");
  }
  a.expect_kept();
  b.expect_kept();
  c.expect_kept();
}

TEST(run_registry, ended_and_dropped_runs_are_pruned) {
  run_registry reg;
  for (int i = 0; i < 1000; ++i) {
    tally t{1};
    auto run = t.run(1);
    reg.add(run);
    ASSERT_EQ(run->next_to_start(), 0u);
    run->finished(0, ok());
  }
  EXPECT_EQ(reg.size(), 0u);
}

} // namespace
