// The ordered deadlines of running sessions.

#include <gtest/gtest.h>

#include "base/deadlines.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::deadlines;

TEST(deadlines_test, next_is_the_earliest) {
  deadlines d;
  auto t0 = deadlines::clock::now();
  EXPECT_FALSE(d.next().has_value());
  d.set(1, t0 + 3s);
  d.set(2, t0 + 1s);
  d.set(3, t0 + 2s);
  EXPECT_EQ(d.next(), t0 + 1s);
  EXPECT_EQ(d.size(), 3u);
}

TEST(deadlines_test, take_due_removes_the_passed_ones_earliest_first) {
  deadlines d;
  auto t0 = deadlines::clock::now();
  d.set(1, t0 + 3s);
  d.set(2, t0 + 1s);
  d.set(3, t0 + 2s);
  EXPECT_TRUE(d.take_due(t0).empty());
  EXPECT_EQ(d.take_due(t0 + 2s), (std::vector<uint64_t>{2, 3})); // at the deadline: due
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(d.next(), t0 + 3s);
  EXPECT_TRUE(d.take_due(t0 + 2s).empty());
}

TEST(deadlines_test, set_moves_and_clear_removes) {
  deadlines d;
  auto t0 = deadlines::clock::now();
  d.set(1, t0 + 1s);
  d.set(2, t0 + 2s);
  d.set(1, t0 + 5s); // connected: the command's deadline replaces the connect deadline
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.next(), t0 + 2s);
  d.clear(2);
  d.clear(7); // none: nothing happens
  EXPECT_EQ(d.next(), t0 + 5s);
  EXPECT_TRUE(d.take_due(t0 + 4s).empty());
  EXPECT_EQ(d.take_due(t0 + 5s), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(d.next().has_value());
  EXPECT_EQ(d.size(), 0u);
}

TEST(deadlines_test, equal_times_keep_every_id) {
  deadlines d;
  auto t0 = deadlines::clock::now();
  d.set(4, t0);
  d.set(9, t0);
  d.set(2, t0);
  EXPECT_EQ(d.take_due(t0), (std::vector<uint64_t>{2, 4, 9}));
}

} // namespace
