// The metrics registry: components write families, a scrape reads them in the order added.

#include <gtest/gtest.h>

#include <thread>

#include "base/metric_registry.hpp"

namespace {

using namespace cws::base;

TEST(metric_registry, a_scrape_calls_every_component_in_the_order_added) {
  metric_registry r;
  counter commits;
  commits.add(3);
  r.add("store", [&](metric_writer& out) {
    out.counter("clusterws_store_commits_total", "Commits", static_cast<double>(commits.value()));
  });
  r.add("ipmi", [](metric_writer& out) {
    auto& f = out.family("clusterws_ipmi_nodes_total", "Nodes by result", metric_type::counter);
    metric_writer::add(f, 2, {{"result", "ok"}});
    metric_writer::add(f, 1, {{"result", "timeout"}});
    out.gauge("clusterws_ipmi_pool_sessions", "Pooled", 4);
  });
  EXPECT_EQ(r.owners(), (std::vector<std::string>{"store", "ipmi"}));
  metric_writer out;
  r.write(out);
  ASSERT_EQ(out.families().size(), 3u);
  const auto& f = out.families();
  EXPECT_EQ(f[0].name, "clusterws_store_commits_total");
  EXPECT_EQ(f[0].type, metric_type::counter);
  ASSERT_EQ(f[0].samples.size(), 1u);
  EXPECT_EQ(f[0].samples[0].value, 3);
  EXPECT_TRUE(f[0].samples[0].labels.empty());
  EXPECT_EQ(f[1].name, "clusterws_ipmi_nodes_total");
  ASSERT_EQ(f[1].samples.size(), 2u);
  EXPECT_EQ(f[1].samples[1].labels, (std::vector<metric_label>{{"result", "timeout"}}));
  EXPECT_EQ(f[1].samples[1].value, 1);
  EXPECT_EQ(f[2].type, metric_type::gauge);
  // read at each scrape: a later count shows in the next one
  commits.add();
  metric_writer again;
  r.write(again);
  EXPECT_EQ(again.families()[0].samples[0].value, 4);
}

TEST(metric_registry, histograms_are_read_whole_and_families_stay_where_they_were_put) {
  histogram h{{10, 100}, 1e-3};
  h.observe(5);
  h.observe(50);
  h.observe(500);
  metric_writer out;
  auto& first = out.family("a", "first", metric_type::counter);
  for (int i = 0; i < 100; ++i) { // (more families do not move the first)
    out.gauge("g" + std::to_string(i), "more", i);
  }
  metric_writer::add(first, 1);
  out.histogram("clusterws_x_seconds", "a histogram", h);
  EXPECT_EQ(out.families().front().samples.size(), 1u);
  const auto& s = out.families().back().samples.at(0);
  EXPECT_EQ(s.buckets.bounds, (std::vector<double>{0.01, 0.1}));
  EXPECT_EQ(s.buckets.cumulative, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(s.buckets.sum, 0.555);
}

TEST(metric_registry, a_writer_may_add_to_the_registry_and_scrapes_run_in_parallel) {
  metric_registry r;
  r.add("self", [&r](metric_writer& out) {
    // (the registry's lock is not held while a component writes)
    out.gauge("clusterws_owners", "owners", static_cast<double>(r.owners().size()));
  });
  std::vector<std::thread> scrapes;
  for (int i = 0; i < 4; ++i) {
    scrapes.emplace_back([&r] {
      for (int j = 0; j < 200; ++j) {
        metric_writer out;
        r.write(out);
        ASSERT_EQ(out.families().size(), 1u);
      }
    });
  }
  for (auto& t : scrapes) {
    t.join();
  }
}

} // namespace
