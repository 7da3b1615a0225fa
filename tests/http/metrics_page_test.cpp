// The metrics page: the HTTP layer's own families, then whatever the components' registry
// holds, in Prometheus' text format (the page knows no component).

#include <gtest/gtest.h>

#include "http/metrics_page.hpp"

namespace {

using namespace cws;

bool has(const std::string& page, const std::string& line) {
  return page.find("\n" + line + "\n") != std::string::npos;
}

TEST(metrics_page, formats_the_registry_families_after_the_http_ones) {
  http::monitor mon;
  auto registry = std::make_shared<base::metric_registry>();
  base::histogram h{{1000, 10000}, 1e-6};
  h.observe(500);
  h.observe(5000);
  registry->add("engine", [&h](base::metric_writer& out) {
    auto& nodes
      = out.family("clusterws_test_nodes_total", "Nodes by result", base::metric_type::counter);
    base::metric_writer::add(nodes, 2, {{"result", "ok"}});
    base::metric_writer::add(nodes, 1, {{"result", "connect-timeout"}});
    out.gauge("clusterws_test_pool", "Pooled now", 7);
    out.histogram("clusterws_test_seconds", "Time", h);
  });
  auto page = http::metrics_page(mon, 5, {registry});
  EXPECT_TRUE(has(page, "# TYPE clusterws_test_nodes_total counter")) << page;
  EXPECT_TRUE(has(page, "# HELP clusterws_test_nodes_total Nodes by result")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_nodes_total{result=\"ok\"} 2")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_nodes_total{result=\"connect-timeout\"} 1")) << page;
  EXPECT_TRUE(has(page, "# TYPE clusterws_test_pool gauge")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_pool 7")) << page;
  EXPECT_TRUE(has(page, "# TYPE clusterws_test_seconds histogram")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_seconds_bucket{le=\"0.001\"} 1")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_seconds_bucket{le=\"+Inf\"} 2")) << page;
  EXPECT_TRUE(has(page, "clusterws_test_seconds_count 2")) << page;
  // the HTTP layer's own, first
  EXPECT_TRUE(has(page, "clusterws_http_connections 5")) << page;
  EXPECT_LT(page.find("clusterws_http_connections"), page.find("clusterws_test_nodes_total"));
}

TEST(metrics_page, without_a_registry_shows_the_http_layer_alone) {
  http::monitor mon;
  auto page = http::metrics_page(mon, 0, {});
  EXPECT_NE(page.find("# TYPE clusterws_start_time_seconds gauge"), std::string::npos);
  EXPECT_TRUE(has(page, "clusterws_http_calls_in_flight 0")) << page;
  EXPECT_EQ(page.find("clusterws_lmdb"), std::string::npos);
  EXPECT_EQ(page.find("clusterws_ssh"), std::string::npos);
}

} // namespace
