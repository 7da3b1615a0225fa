// /nodes/{nr}/eventlog and /beacon: routing to reventlog and rbeacon calls, and xCAT's
// actionout for them (eventlog's lines as an array). Pure functions, no sockets.

#include <gtest/gtest.h>

#include "http/render.hpp"
#include "http/router.hpp"

namespace {

using namespace cws::http;
using cws::api::operation;

routed go(std::string method, std::string target, std::string body = {}) {
  http_input in;
  in.method = std::move(method);
  in.target = std::move(target);
  in.body = std::move(body);
  in.content_type = "application/json";
  in.client = "127.0.0.1";
  return route(in, router_limits{});
}

TEST(eventlog_routes, eventlog_and_beacon_map_to_reventlog_and_rbeacon) {
  auto r = go("GET", "/clusterws/nodes/compute/eventlog");
  ASSERT_FALSE(r.answer);
  EXPECT_EQ(r.call->op, operation::eventlog);
  EXPECT_EQ(r.call->command, "all");
  EXPECT_EQ(r.call->policy_command, "reventlog");
  EXPECT_TRUE(cws::api::is_fan_out(r.call->op));
  EXPECT_EQ(r.out, output::action);
  r = go("DELETE", "/clusterws/nodes/compute/eventlog");
  EXPECT_EQ(r.call->command, "clear");
  EXPECT_EQ(r.call->policy_command, "reventlog");
  auto refused = go("PUT", "/clusterws/nodes/n1/eventlog", R"({"action":"clear"})");
  ASSERT_TRUE(refused.answer);
  EXPECT_EQ(render(refused, *refused.answer).status, 405u);
  r = go("GET", "/clusterws/nodes/n1/beacon?stream=1");
  EXPECT_EQ(r.call->op, operation::beacon);
  EXPECT_EQ(r.call->command, "stat");
  EXPECT_EQ(r.call->policy_command, "rbeacon");
  EXPECT_TRUE(r.stream);
  r = go("PUT", "/clusterws/nodes/n1/beacon", R"({"action":"blink"})");
  EXPECT_EQ(r.call->command, "blink");
  for (const char* body : {"{}", R"({"order":"on"})"}) {
    auto missed = go("PUT", "/clusterws/nodes/n1/beacon", body);
    ASSERT_TRUE(missed.answer) << body;
    auto t = render(missed, *missed.answer);
    EXPECT_EQ(t.status, 404u);
    EXPECT_NE(t.body.find("Missed Action."), std::string::npos) << t.body;
  }
}

TEST(eventlog_routes, actionout_pushes_eventlog_lines_and_keeps_beacon_a_value) {
  auto r = go("GET", "/clusterws/nodes/n1,n2/eventlog");
  cws::api::api_result res;
  cws::base::node_result n1;
  n1.name = "n1";
  n1.rc = 0;
  n1.out = "line one\nline two";
  cws::base::node_result n2 = n1;
  n2.name = "n2";
  n2.out = "no SEL entries";
  res.nodes = {n2, n1};
  EXPECT_EQ(render(r, res).body,
            R"({"n1":{"eventlog":["line one","line two"]},"n2":{"eventlog":["no SEL entries"]}})"
            "\n");
  EXPECT_EQ(stream_line(n1, action_key(operation::eventlog)),
            R"({"node":"n1","rc":0,"eventlog":["line one","line two"]})"
            "\n");
  // DELETE: nothing on success, as xCAT's CGI
  auto del = go("DELETE", "/clusterws/nodes/n1/eventlog");
  res.nodes = {n1};
  EXPECT_EQ(render(del, res).status, 200u);
  EXPECT_EQ(render(del, res).body, "");
  auto beacon = go("GET", "/clusterws/nodes/n1/beacon");
  n1.out = "on";
  res.nodes = {n1};
  EXPECT_EQ(render(beacon, res).body, R"({"n1":{"beacon":"on"}})"
                                      "\n");
  EXPECT_EQ(std::string{action_key(operation::show)}, "");
}

} // namespace
