// The operation-traits table: a row per operation, and each row says what the API did
// before the table (is_write, is_fan_out, the session's audit rule, the router's policy
// command, render's action key), pinned here.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/operation_traits.hpp"
#include "api/planner.hpp"

namespace {

using namespace cws::api;
using o = operation;

struct pinned {
  operation op;
  const char* name;
  bool write;
  bool fan_out;
  /// changes_state with command "stat", "clear", "on"
  bool audited_stat;
  bool audited_clear;
  bool audited_on;
  const char* policy;
  const char* key;
};

// What the API did before the table (api/call.cpp, http/session.ipp audited_call,
// http/router.cpp, http/render.cpp action_key at 4fa30f1).
const pinned before[] = {
  {o::list, "list", false, false, false, false, false, "lsdef", ""},
  {o::show, "show", false, false, false, false, false, "lsdef", ""},
  {o::nodels, "nodels", false, false, false, false, false, "nodels", ""},
  {o::make, "make", true, false, true, true, true, "mkdef", ""},
  {o::change, "change", true, false, true, true, true, "chdef", ""},
  {o::remove, "remove", true, false, true, true, true, "rmdef", ""},
  {o::site_show, "site_show", false, false, false, false, false, "lsdef", ""},
  {o::token_create, "token_create", true, false, false, false, false, "", ""},
  {o::token_revoke, "token_revoke", true, false, true, true, true, "", ""},
  {o::token_list, "token_list", false, false, false, false, false, "", ""},
  {o::nodeshell, "nodeshell", false, true, true, true, true, "xdsh", ""},
  {o::rename, "rename", true, false, true, true, true, "chdef", ""},
  {o::template_list, "template_list", false, false, false, false, false, "lsdef", ""},
  {o::template_show, "template_show", false, false, false, false, false, "lsdef", ""},
  {o::table_nodes, "table_nodes", false, false, false, false, false, "getTablesNodesAttribs", ""},
  {o::table_rows, "table_rows", false, false, false, false, false, "getAttribs", ""},
  {o::table_set_nodes, "table_set_nodes", true, false, true, true, true, "setNodesAttribs", ""},
  {o::table_set_rows, "table_set_rows", true, false, true, true, true, "setAttribs", ""},
  {o::table_delete_rows, "table_delete_rows", true, false, true, true, true, "delEntries", ""},
  {o::make_networks, "make_networks", true, false, true, true, true, "makenetworks", ""},
  // issue #29: reads the store, changes the DHCP server; audited
  {o::make_dhcp, "make_dhcp", false, false, true, true, true, "makedhcp", ""},
  {o::make_hosts, "make_hosts", false, false, true, true, true, "makehosts", ""},
  {o::authorize, "authorize", false, false, false, false, false, "", ""},
  {o::nodecopy, "nodecopy", false, true, true, true, true, "xdcp", ""},
  {o::power, "power", false, true, false, true, true, "rpower", "power"},
  {o::nextboot, "nextboot", false, true, false, true, true, "rsetboot", "nextboot"},
  {o::eventlog, "eventlog", false, true, false, true, false, "reventlog", "eventlog"},
  {o::beacon, "beacon", false, true, false, true, true, "rbeacon", "beacon"},
  {o::vitals, "vitals", false, true, false, false, false, "rvitals", "vitals"},
  {o::inventory, "inventory", false, true, false, false, false, "rinv", "inventory"},
  {o::nodestat, "nodestat", false, true, true, true, true, "nodestat", ""},
  {o::job_list, "job_list", false, false, false, false, false, "", ""},
  {o::job_show, "job_show", false, false, false, false, false, "", ""},
  {o::job_cancel, "job_cancel", false, false, false, false, false, "", ""},
  {o::dns_apply, "dns_apply", false, false, true, true, true, "makedns", ""},
  {o::dns_delete, "dns_delete", false, false, true, true, true, "makedns", ""},
  {o::dns_service, "dns_service", false, false, true, true, true, "makedns", ""},
  {o::bootstate, "bootstate", false, false, false, false, false, "nodeset", "bootstate"},
  {o::nodeset, "nodeset", true, false, true, true, true, "nodeset", "bootstate"},
  {o::provision, "provision", false, true, true, true, true, "rinstall", "provision"},
  {o::console_log, "console_log", false, false, false, false, false, "rcons", ""},
  {o::conserver, "conserver", false, false, true, true, true, "makeconservercf", ""},
  {o::node_table, "node_table", false, false, false, false, false, "lsdef", ""},
};

bool audited(operation op, const char* command) {
  api_call call;
  call.op = op;
  call.command = command;
  return changes_state(call);
}

TEST(operation_traits, every_operation_has_a_row_and_a_pinned_expectation) {
  ASSERT_EQ(std::size(before), operation_count);
  std::set<std::string> names;
  for (size_t i = 0; i < operation_count; ++i) {
    auto op = static_cast<operation>(i);
    EXPECT_EQ(traits(op).op, op);
    EXPECT_EQ(before[i].op, op) << "the pinned list follows the enum";
    EXPECT_TRUE(names.insert(std::string{traits(op).name}).second) << traits(op).name;
  }
}

TEST(operation_traits, each_row_agrees_with_what_the_api_did_before) {
  for (const auto& p : before) {
    SCOPED_TRACE(p.name);
    const auto& t = traits(p.op);
    EXPECT_EQ(t.name, p.name);
    EXPECT_EQ(is_write(p.op), p.write);
    EXPECT_EQ(is_fan_out(p.op), p.fan_out);
    EXPECT_EQ(audited(p.op, "stat"), p.audited_stat);
    EXPECT_EQ(audited(p.op, "clear"), p.audited_clear);
    EXPECT_EQ(audited(p.op, "on"), p.audited_on);
    EXPECT_EQ(policy_command(p.op), p.policy);
    EXPECT_EQ(t.result_key, p.key);
  }
}

TEST(operation_traits, a_name_finds_its_row_and_no_other_text_does) {
  for (size_t i = 0; i < operation_count; ++i) {
    auto op = static_cast<operation>(i);
    const auto* row = find_operation(traits(op).name);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->op, op);
  }
  EXPECT_EQ(find_operation(""), nullptr);
  EXPECT_EQ(find_operation("count_"), nullptr);
  EXPECT_EQ(find_operation("Nodeshell"), nullptr);
}

TEST(operation_traits, every_fan_out_operation_has_a_planner_and_no_other_has) {
  for (size_t i = 0; i < operation_count; ++i) {
    auto op = static_cast<operation>(i);
    EXPECT_EQ(has_planner(op), is_fan_out(op)) << traits(op).name;
  }
}

} // namespace
