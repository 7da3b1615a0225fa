// The run meter every fan-out engine counts its runs with.

#include <gtest/gtest.h>

#include "base/run_meter.hpp"

namespace {

using namespace cws::base;

node_result result(int rc, std::string error = {}) {
  node_result r;
  r.rc = rc;
  r.error = std::move(error);
  return r;
}

TEST(run_meter, counts_runs_and_nodes_in_flight_and_results_by_code) {
  auto m = std::make_shared<run_meter>();
  std::vector<size_t> seen;
  bool done = false;
  std::function<void(size_t, node_result)> on_result = [&](size_t i, node_result r) {
    seen.push_back(i);
    EXPECT_EQ(r.out, "x"); // passed on whole
  };
  std::function<void()> on_done = [&] {
    done = true;
  };
  m->wrap(3, on_result, on_done);
  auto s = m->read();
  EXPECT_EQ(s.runs, 1u);
  EXPECT_EQ(s.runs_in_flight, 1);
  EXPECT_EQ(s.nodes_in_flight, 3);
  auto r0 = result(0);
  r0.out = "x";
  on_result(0, r0);
  auto r1 = result(2);
  r1.out = "x";
  on_result(1, r1);
  auto r2 = result(-1, "timeout");
  r2.out = "x";
  on_result(2, r2);
  s = m->read();
  EXPECT_EQ(s.nodes_in_flight, 0);
  EXPECT_EQ(s.runs_in_flight, 1); // until on_done
  EXPECT_EQ(s.results, (std::vector<std::pair<std::string, uint64_t>>{
                         {"nonzero", 1}, {"ok", 1}, {"timeout", 1}}));
  on_done();
  EXPECT_TRUE(done);
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2}));
  s = m->read();
  EXPECT_EQ(s.runs_in_flight, 0);
  EXPECT_EQ(s.runs, 1u);
}

TEST(run_meter, callbacks_called_after_the_engine_is_gone_still_count) {
  std::function<void(size_t, node_result)> on_result = [](size_t, node_result) {
  };
  std::function<void()> on_done = [] {
  };
  std::weak_ptr<run_meter> left;
  {
    auto m = std::make_shared<run_meter>();
    left = m;
    m->wrap(1, on_result, on_done);
  }
  ASSERT_FALSE(left.expired()); // held by the callbacks
  on_result(0, result(-1, "disconnected"));
  EXPECT_EQ(left.lock()->read().results.at(0).first, "disconnected");
  on_done();
  on_result = nullptr;
  on_done = nullptr;
  EXPECT_TRUE(left.expired());
}

TEST(run_meter, another_result_type_is_counted_by_its_own_rule) {
  struct outcome {
    std::string error;
  };
  auto m = std::make_shared<run_meter>();
  std::function<void(size_t, outcome)> on_result = [](size_t, outcome) {
  };
  std::function<void()> on_done = [] {
  };
  m->wrap(2, on_result, on_done, [](const outcome& o) {
    return o.error.empty() ? std::string_view{"ok"} : std::string_view{o.error};
  });
  on_result(0, {});
  on_result(1, {"resolve"});
  on_done();
  auto s = m->read();
  EXPECT_EQ(s.results, (std::vector<std::pair<std::string, uint64_t>>{{"ok", 1}, {"resolve", 1}}));
  EXPECT_EQ(s.nodes_in_flight, 0);
  EXPECT_EQ(s.runs_in_flight, 0);
}

} // namespace
