// api::plan_delegated (api/planner.hpp): a fan-out call split by each node's `servicenode`
// (inherited from groups) over the service nodes that are up, with the delegated nodes'
// targets resolved from the same read: address, port and user for nodeshell; the BMC's
// address, port, user and password, and the staged power-on delay, for the hardware verbs.

#include <gtest/gtest.h>

#include <memory>

#include "../store/temp_home.hpp"
#include "api/planner.hpp"
#include "store/database.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws;
using store::object_type;

class delegated_plan_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db = std::make_shared<store::database>(dir.path);
    db->write([](store::write_txn& t) {
      t.put(object_type::group, "rack1", {{"servicenode", "sn1,sn2"}});
      t.put(object_type::group, "bmcs",
            {{"mgt", "ipmi"}, {"bmcusername", "admin"}, {"servicenode", "sn2"}});
      t.put(object_type::node, "n1", {{"groups", "rack1,all"}, {"ip", "10.0.0.1"}});
      t.put(object_type::node, "n2", {{"groups", "rack1,all"}, {"sshport", "2222"}});
      t.put(object_type::node, "b1",
            {{"groups", "bmcs,all"}, {"bmc", "10.1.0.1"}, {"bmcpassword", "pw1"}});
      t.put(object_type::node, "b2",
            {{"groups", "bmcs,all"}, {"bmc", "10.1.0.2"}, {"bmcport", "6230"}});
      // not mgt=ipmi: the head gives its error, whatever its servicenode says
      t.put(object_type::node, "o1", {{"groups", "bmcs,all"}, {"mgt", "openbmc"}});
      t.put(object_type::site, store::bmc_credentials_object,
            {{"username", "ipmiuser"}, {"password", "ipmipw"}});
      t.put(object_type::site, "clustersite",
            {{"syspowerinterval", "7"}, {"syspowermaxnodes", "1"}, {"ipmitimeout", "3"}});
    });
    sns.known = {{"sn1", false}, {"sn2", true}};
  }

  api::api_result plan(api::operation op, const std::string& range, const std::string& command,
                       api::delegated_plan& out) {
    api::api_call call;
    call.op = op;
    call.target = range;
    call.command = command;
    api::authorization auth;
    auth.user = "alice";
    return api::plan_delegated(*db, call, auth, {}, d, sns, out);
  }

  cws::test::temp_dir dir;
  std::shared_ptr<store::database> db;
  api::drivers d;
  api::service_nodes sns;
};

TEST_F(delegated_plan_test, nodeshell_targets_carry_address_port_and_the_caller_as_user) {
  api::delegated_plan p;
  ASSERT_TRUE(plan(api::operation::nodeshell, "n1,n2", "uptime", p).ok());
  EXPECT_EQ(p.nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(p.where.shares.size(), 1u);
  EXPECT_EQ(p.where.shares[0].service_node, "sn2") << "sn1 is down: its backup takes them";
  EXPECT_TRUE(p.where.head.empty());
  EXPECT_EQ(p.head, nullptr) << "the head runs none";
  ASSERT_EQ(p.job.targets.size(), 2u);
  EXPECT_EQ(p.job.operation, "nodeshell");
  EXPECT_EQ(p.job.command, "uptime");
  EXPECT_EQ(p.job.targets[0].address, "10.0.0.1");
  EXPECT_EQ(p.job.targets[0].port, 22) << "the head's default port, resolved by the head";
  EXPECT_EQ(p.job.targets[1].port, 2222);
  EXPECT_EQ(p.job.targets[1].user, "alice");
  EXPECT_EQ(p.job.targets[1].index, 1u);
  EXPECT_EQ(p.fanout, 64u);
}

TEST_F(delegated_plan_test, hardware_targets_carry_the_bmc_and_its_credentials_and_stages) {
  api::delegated_plan p;
  ASSERT_TRUE(plan(api::operation::power, "b1,b2,o1", "on", p).ok());
  ASSERT_EQ(p.where.shares.size(), 1u);
  EXPECT_EQ(p.where.shares[0].indexes, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(p.where.head, (std::vector<uint32_t>{2})) << "o1 is no ipmi node";
  ASSERT_NE(p.head, nullptr);
  EXPECT_EQ(p.head->nodes(), (std::vector<std::string>{"o1"}));
  const auto& b1 = p.job.targets[0];
  EXPECT_EQ(b1.bmc, "10.1.0.1");
  EXPECT_EQ(b1.bmc_port, 623);
  EXPECT_EQ(b1.bmc_user, "admin");
  EXPECT_EQ(b1.bmc_password, "pw1");
  EXPECT_EQ(b1.delay_ms, 0);
  const auto& b2 = p.job.targets[1];
  EXPECT_EQ(b2.bmc_port, 6230);
  EXPECT_EQ(b2.bmc_password, "ipmipw") << "the passwd table's ipmi row";
  EXPECT_EQ(b2.delay_ms, 7000) << "the second stage of syspowermaxnodes=1";
  EXPECT_EQ(p.job.bmc_timeout_s, 3u);
  EXPECT_EQ(p.job.bmc_retries, 3u);
}

TEST_F(delegated_plan_test,
       syspowerinterval_without_syspowermaxnodes_is_refused_when_every_node_is_delegated) {
  db->write([](store::write_txn& t) {
    t.put(object_type::site, "clustersite", {{"syspowerinterval", "7"}});
  });
  api::delegated_plan p;
  auto r = plan(api::operation::power, "b1,b2", "on", p);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0],
            "IPMI plugin requires syspowermaxnodes be defined if syspowerinterval is defined");
}

TEST_F(delegated_plan_test, nodes_without_servicenode_are_planned_on_the_head_as_before) {
  db->write([](store::write_txn& t) {
    t.put(object_type::node, "o2", {{"groups", "all"}, {"mgt", "openbmc"}});
    t.put(object_type::node, "o3", {{"groups", "all"}, {"mgt", "openbmc"}});
  });
  api::delegated_plan p;
  ASSERT_TRUE(plan(api::operation::power, "o2,o3", "stat", p).ok());
  EXPECT_TRUE(p.where.all_on_head());
  ASSERT_NE(p.head, nullptr);
  EXPECT_EQ(p.head->nodes(), (std::vector<std::string>{"o2", "o3"}));
  EXPECT_TRUE(p.job.targets.empty()) << "nothing to resolve";
}

TEST_F(delegated_plan_test, a_node_whose_service_nodes_are_all_down_is_refused) {
  sns.known = {{"sn1", false}, {"sn2", false}};
  api::delegated_plan p;
  ASSERT_TRUE(plan(api::operation::nodeshell, "n1", "uptime", p).ok());
  ASSERT_EQ(p.where.refused.size(), 1u);
  EXPECT_NE(p.where.refused[0].message.find("sn1, sn2"), std::string::npos);
  EXPECT_EQ(p.head, nullptr);
}

TEST_F(delegated_plan_test, copies_delegate_but_pulls_and_rinstall_do_not) {
  api::api_call call;
  call.op = api::operation::nodeshell;
  EXPECT_TRUE(api::delegates(call));
  call.op = api::operation::nodestat;
  EXPECT_TRUE(api::delegates(call));
  call.op = api::operation::power;
  EXPECT_TRUE(api::delegates(call));
  call.op = api::operation::provision;
  EXPECT_FALSE(api::delegates(call));
  call.op = api::operation::nodecopy;
  auto copy = std::make_shared<api::copy_request>();
  call.copy = copy;
  EXPECT_TRUE(api::delegates(call)) << "the files' bytes go in the share";
  call.op = api::operation::nodeshell;
  copy->execute = true;
  EXPECT_TRUE(api::delegates(call)) << "xdsh -e: a copy and its run";
  call.op = api::operation::nodecopy;
  copy->execute = false;
  copy->pull = true;
  EXPECT_FALSE(api::delegates(call)) << "xdcp -P stays on the head";
}

} // namespace
