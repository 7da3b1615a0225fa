#include <gtest/gtest.h>

#include "store/policy.hpp"

namespace {

using namespace cws::store;

policy_row row(std::string prio, attr_map attrs, std::vector<std::string> nodes = {}) {
  auto r = make_policy_row(prio, attrs);
  r.nodes = std::move(nodes);
  return r;
}

policy_request ask(std::string user, std::string command, std::vector<std::string> nodes = {}) {
  policy_request q;
  q.user = std::move(user);
  q.command = std::move(command);
  q.hosts = {"127.0.0.1", "localhost"};
  q.has_noderange = !nodes.empty();
  q.nodes_known = q.has_noderange;
  q.nodes = std::move(nodes);
  return q;
}

std::vector<policy_row> defaults() {
  std::vector<policy_row> rows{row("1", {{"name", "root"}, {"rule", "allow"}}),
                               row("1.2", {{"name", "mn"}, {"rule", "trusted"}}),
                               row("4.4", {{"commands", "getpostscript"}, {"rule", "allow"}})};
  sort_policy(rows);
  return rows;
}

TEST(policy, root_allowed_others_denied_by_default) {
  auto rows = defaults();
  EXPECT_TRUE(evaluate_policy(rows, ask("root", "lsdef")).allowed);
  auto d = evaluate_policy(rows, ask("alice", "lsdef"));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.row, "");
  EXPECT_TRUE(evaluate_policy(rows, ask("alice", "getpostscript")).allowed);
}

// Issue #27: the default `1.2 <hostname> trusted` row names a host, not a user: a local Unix
// account (or an API user) that shares the host's name gains nothing from it.
TEST(policy, a_trusted_row_never_matches_a_user_of_the_hosts_name) {
  auto rows = defaults();
  auto d = evaluate_policy(rows, ask("mn", "chdef", {"cn1"}));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.row, "");
  auto host = ask("mn", "chdef", {"cn1"});
  host.host_identity = true;
  EXPECT_TRUE(evaluate_policy(rows, host).allowed);
}

TEST(policy, numeric_priority_order_first_match_decides) {
  std::vector<policy_row> rows{
    row("10", {{"name", "alice"}, {"rule", "allow"}}),
    row("9.5", {{"name", "alice"}, {"commands", "rmdef"}, {"rule", "deny"}})};
  sort_policy(rows);
  EXPECT_EQ(rows.front().priority, "9.5"); // numeric, not ASCII
  EXPECT_FALSE(evaluate_policy(rows, ask("alice", "rmdef")).allowed);
  EXPECT_TRUE(evaluate_policy(rows, ask("alice", "lsdef")).allowed);
}

TEST(policy, star_name_host_commands_and_parameters) {
  std::vector<policy_row> rows{
    row("5",
        {{"name", "*"}, {"commands", "lsdef,nodels"}, {"host", "10.0.0.9"}, {"rule", "allow"}}),
    row("6", {{"name", "bob"}, {"parameters", "^-t network"}, {"rule", "accept"}})};
  EXPECT_FALSE(evaluate_policy(rows, ask("anyone", "lsdef")).allowed); // wrong host
  rows[0].host = "localhost";
  EXPECT_TRUE(evaluate_policy(rows, ask("anyone", "nodels")).allowed);
  EXPECT_FALSE(evaluate_policy(rows, ask("anyone", "chdef")).allowed);
  auto q = ask("bob", "chdef");
  q.arguments = "-t network -o net1";
  EXPECT_TRUE(evaluate_policy(rows, q).allowed);
  q.arguments = "-t node -o n1";
  EXPECT_FALSE(evaluate_policy(rows, q).allowed);
}

TEST(policy, noderange_rows_allow_part_and_continue) {
  std::vector<policy_row> rows{
    row("5", {{"name", "alice"}, {"noderange", "rack1"}, {"rule", "allow"}}, {"n1", "n2"}),
    row("6", {{"name", "alice"}, {"noderange", "rack2"}, {"rule", "allow"}}, {"n3"}),
    row("7", {{"name", "alice"}, {"noderange", "n4"}, {"rule", "deny"}}, {"n4"})};
  EXPECT_TRUE(evaluate_policy(rows, ask("alice", "xdsh", {"n1", "n3"})).allowed);
  EXPECT_TRUE(evaluate_policy(rows, ask("alice", "xdsh", {"n1"})).allowed);
  auto d = evaluate_policy(rows, ask("alice", "xdsh", {"n1", "n4"}));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.row, "7");
  EXPECT_FALSE(evaluate_policy(rows, ask("alice", "xdsh", {"n1", "n9"})).allowed);
  EXPECT_FALSE(evaluate_policy(rows, ask("alice", "lsdef")).allowed); // no noderange: skipped
}

TEST(policy, nodes_are_asked_for_only_when_a_noderange_row_could_decide) {
  std::vector<policy_row> rows{
    row("1", {{"name", "root"}, {"rule", "allow"}}),
    row("5", {{"name", "alice"}, {"noderange", "rack1"}, {"rule", "allow"}}, {"n1", "n2"})};
  auto q = ask("root", "xdsh", {"n1"});
  q.nodes_known = false;
  auto d = evaluate_policy(rows, q); // an earlier row decides: no nodes needed
  EXPECT_TRUE(d.allowed);
  EXPECT_FALSE(d.needs_nodes);
  q.user = "mallory"; // no row names her: refused without her nodes
  d = evaluate_policy(rows, q);
  EXPECT_FALSE(d.allowed);
  EXPECT_FALSE(d.needs_nodes);
  q.user = "alice";
  d = evaluate_policy(rows, q);
  EXPECT_FALSE(d.allowed);
  EXPECT_TRUE(d.needs_nodes);
  q.nodes_known = true;
  d = evaluate_policy(rows, q);
  EXPECT_TRUE(d.allowed);
  EXPECT_FALSE(d.needs_nodes);
}

TEST(policy, rules_are_checked_when_written_and_read_as_xcat_reads_them) {
  for (auto r : {"allow", "accept", "trusted", "deny", "Allow", "DENY"}) {
    EXPECT_TRUE(is_policy_rule(r)) << r;
  }
  for (auto r : {"disallow", "allowed", "", "no", "allow "}) {
    EXPECT_FALSE(is_policy_rule(r)) << r;
  }
  // a row stored before the check is read as xCAT reads it (docs/compatibility.md)
  std::vector<policy_row> rows{row("6", {{"name", "bob"}, {"rule", "disallow"}})};
  EXPECT_TRUE(evaluate_policy(rows, ask("bob", "lsdef")).allowed);
}

TEST(policy, disabled_rows_are_left_out) {
  EXPECT_TRUE(policy_row_enabled({{"rule", "allow"}}));
  EXPECT_TRUE(policy_row_enabled({{"disable", "no"}}));
  EXPECT_FALSE(policy_row_enabled({{"disable", "1"}}));
  EXPECT_FALSE(policy_row_enabled({{"disable", "yes"}}));
}

} // namespace
