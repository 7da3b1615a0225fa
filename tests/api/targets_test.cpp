// api/targets: the call's verified nodes, ports, the site numbers of hardware control and
// the one fanout rule.

#include <gtest/gtest.h>

#include <memory>

#include "../store/temp_home.hpp"
#include "api/hardware.hpp"
#include "api/targets.hpp"
#include "store/database.hpp"

namespace {

using namespace cws;
using store::object_type;

class targets_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_shared<store::database>(dir.path);
    db->write([](store::write_txn& t) {
      t.put(object_type::node, "n1", {{"groups", "all"}, {"ip", "10.0.0.1"}});
      t.put(object_type::node, "n2", {{"groups", "all"}, {"sshport", "2222"}});
      t.put(object_type::node, "n3", {{"groups", "all"}});
    });
  }

  void put(object_type type, const std::string& name, store::attr_map attrs) {
    db->write([&](store::write_txn& t) { t.put(type, name, attrs); });
  }

  api::api_result targets(const std::string& range, std::vector<api::node_target>& out,
                          const api::authorization& auth = {}) {
    api::api_call call;
    call.target = range;
    auto txn = db->read();
    store::cluster_view view{txn};
    return api::node_targets(view, call, auth, {}, out);
  }

  api::api_result site(const api::site_number& n, long& out) {
    auto txn = db->read();
    return api::read_site_number(txn, n, out);
  }

  cws::test::temp_dir dir;
  std::shared_ptr<store::database> db;
};

TEST_F(targets_test, targets_carry_address_and_port_and_zero_for_an_unset_port) {
  std::vector<api::node_target> out;
  ASSERT_TRUE(targets("n1-n3", out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "n1");
  EXPECT_EQ(out[0].address, "10.0.0.1");
  EXPECT_EQ(out[0].port, 0);
  EXPECT_EQ(out[1].port, 2222);
  EXPECT_EQ(out[2].address, "");
}

TEST_F(targets_test, missing_nodes_fail_the_call_with_their_names) {
  std::vector<api::node_target> out;
  auto r = targets("n1,n9", out);
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.messages.empty());
  EXPECT_NE(r.messages.front().find("n9"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

TEST_F(targets_test, site_excludenodes_leaves_the_expansion) {
  put(object_type::site, "clustersite", {{"excludenodes", "n2"}});
  std::vector<api::node_target> out;
  ASSERT_TRUE(targets("all", out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].name, "n3");
}

TEST_F(targets_test, nodes_policy_expanded_are_verified_not_expanded_again) {
  api::authorization auth;
  auth.nodes
    = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"n3", "n1"});
  std::vector<api::node_target> out;
  ASSERT_TRUE(targets("ignored-range", out, auth).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "n3"); // as policy gave them
  auth.nodes = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"gone"});
  EXPECT_FALSE(targets("n1", out, auth).ok());
}

TEST_F(targets_test, a_port_is_a_whole_number_from_1_to_65535) {
  EXPECT_EQ(api::parse_port("22"), 22);
  EXPECT_EQ(api::parse_port("65535"), 65535);
  EXPECT_FALSE(api::parse_port(""));
  EXPECT_FALSE(api::parse_port("0"));
  EXPECT_FALSE(api::parse_port("65536"));
  EXPECT_FALSE(api::parse_port("22abc")); // std::atoi read 22 here
  EXPECT_FALSE(api::parse_port("-1"));
  EXPECT_FALSE(api::parse_port(" 22"));
  EXPECT_FALSE(api::parse_port("99999999999999999999999"));
}

TEST_F(targets_test, a_bad_sshport_fails_the_call_naming_node_and_value) {
  put(object_type::node, "n3", {{"groups", "all"}, {"sshport", "22abc"}});
  std::vector<api::node_target> out;
  auto r = targets("n1-n3", out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.messages.front(), "Node n3: sshport '22abc' is not a port (a whole number from 1 "
                                "to 65535); nothing was run.");
  EXPECT_TRUE(out.empty());
}

TEST_F(targets_test, an_unset_site_number_is_xcats_default) {
  long v = 0;
  ASSERT_TRUE(site({"ipmitimeout", 2, 1, 3600}, v).ok()); // no clustersite at all
  EXPECT_EQ(v, 2);
  put(object_type::site, "clustersite", {{"ipmitimeout", ""}, {"ipmiretries", "5"}});
  ASSERT_TRUE(site({"ipmitimeout", 2, 1, 3600}, v).ok()); // empty
  EXPECT_EQ(v, 2);
  ASSERT_TRUE(site({"ipmiretries", 3, 1, 100}, v).ok());
  EXPECT_EQ(v, 5);
}

TEST_F(targets_test, a_bad_site_number_is_an_error_naming_key_value_and_range) {
  long v = 7;
  for (const char* bad : {"abc", "5s", "0", "3601", "-2", "1e3"}) {
    put(object_type::site, "clustersite", {{"ipmitimeout", bad}});
    auto r = site({"ipmitimeout", 2, 1, 3600}, v);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.messages.front(), std::string{"site.ipmitimeout is '"} + bad
                                    + "': it must be a whole number from 1 to 3600 (unset: 2); "
                                      "nothing was run.");
  }
}

TEST_F(targets_test, hardware_planning_refuses_a_bad_site_value_or_bmcport_and_sends_nothing) {
  put(object_type::node, "n1", {{"groups", "all"}, {"mgt", "ipmi"}, {"bmc", "127.0.0.1"}});
  api::api_call call;
  call.op = api::operation::power;
  call.command = "stat";
  call.target = "n1";
  api::node_operation_ptr out;
  // no driver at all: a plan that got past the checks would fail as "not enabled"
  put(object_type::site, "clustersite", {{"ipmiretries", "three"}});
  auto r = api::plan_hardware(*db, call, {}, {}, {}, {}, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.messages.front(), "site.ipmiretries is 'three': it must be a whole number from 1 "
                                "to 100 (unset: 3); nothing was run.");
  put(object_type::site, "clustersite", {{"ipmiretries", "2"}});
  put(object_type::node, "n1",
      {{"groups", "all"}, {"mgt", "ipmi"}, {"bmc", "127.0.0.1"}, {"bmcport", "70000"}});
  r = api::plan_hardware(*db, call, {}, {}, {}, {}, out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.messages.front(), "Node n1: bmcport '70000' is not a port (a whole number from 1 "
                                "to 65535); nothing was run.");
  put(object_type::node, "n1",
      {{"groups", "all"}, {"mgt", "ipmi"}, {"bmc", "127.0.0.1"}, {"bmcport", "6230"}});
  r = api::plan_hardware(*db, call, {}, {}, {}, {}, out);
  EXPECT_EQ(r.error, api::errc::unavailable); // past the checks: no ipmi engine here
  EXPECT_EQ(out, nullptr);
}

TEST(effective_fanout, the_request_else_the_default_within_the_most_and_at_least_one) {
  EXPECT_EQ(api::effective_fanout(0, 64, 1024), 64u);      // not asked: the default
  EXPECT_EQ(api::effective_fanout(10, 64, 1024), 10u);     // asked
  EXPECT_EQ(api::effective_fanout(5000, 64, 1024), 1024u); // never past the most
  EXPECT_EQ(api::effective_fanout(0, 2048, 1024), 1024u);  // a default past it too
  EXPECT_EQ(api::effective_fanout(0, 0, 1024), 1u);        // never none
  EXPECT_EQ(api::effective_fanout(3, 64, 0), 1u);
}

TEST_F(targets_test, service_nodes_are_read_inherited_from_groups_and_site_master_names_the_head) {
  put(object_type::group, "rack1", {{"servicenode", "sn1,sn2"}});
  put(object_type::node, "n1", {{"groups", "rack1,all"}});
  put(object_type::node, "n2", {{"groups", "rack1,all"}, {"servicenode", "sn3"}});
  auto txn = db->read();
  store::cluster_view view{txn};
  EXPECT_EQ(api::service_node_values(view, {"n1", "n2", "n3"}),
            (std::vector<std::string>{"sn1,sn2", "sn3", ""}));
  EXPECT_EQ(api::head_names(view, {"mgmt"}), (std::vector<std::string>{"mgmt"}));
  put(object_type::site, "clustersite", {{"master", "10.0.0.254"}});
  auto txn2 = db->read();
  store::cluster_view view2{txn2};
  EXPECT_EQ(api::head_names(view2, {"mgmt"}), (std::vector<std::string>{"mgmt", "10.0.0.254"}));
}

} // namespace
