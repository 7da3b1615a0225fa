#include "base/metric.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

using cws::base::histogram;

TEST(metric, histogram_buckets_are_cumulative_with_an_overflow_bucket) {
  histogram h{{10, 100, 1000}, 1e-3};
  for (uint64_t v : {0, 10, 11, 100, 5000, 7000}) {
    h.observe(v);
  }
  auto s = h.read();
  EXPECT_EQ(s.bounds, (std::vector<double>{0.01, 0.1, 1.0}));
  // <= 10: 0 and 10; <= 100: 11 and 100 too; <= 1000: no more; +Inf: all six
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2, 4, 4, 6}));
  EXPECT_DOUBLE_EQ(s.sum, 12.121);
}

TEST(metric, counts_from_several_threads_add_up) {
  cws::base::counter c;
  cws::base::gauge g;
  histogram h{{1}, 1};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        c.add();
        g.add(1);
        h.observe(2);
        g.add(-1);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(c.value(), 400000u);
  EXPECT_EQ(g.value(), 0);
  EXPECT_EQ(h.read().cumulative, (std::vector<uint64_t>{0, 400000}));
}

} // namespace
