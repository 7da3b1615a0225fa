// GET /clusterws/nodetable (the web console's node table, docs/web.md) against a real
// clusterwsd: pages, sorting, columns, bad parameters, noderange errors worded as GET
// /nodes/{noderange} words them, policy as GET /nodes, the nodetable_max_rows limit.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;

/// The node names of a nodetable answer's rows, in order.
std::vector<std::string> row_names(const std::string& body) {
  std::vector<std::string> out;
  const std::string key = R"({"node":")";
  for (auto at = body.find(key); at != std::string::npos; at = body.find(key, at)) {
    at += key.size();
    out.push_back(body.substr(at, body.find('"', at) - at));
  }
  return out;
}

class nodetable_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app} << "nodetable_max_rows = 50\n";
    auto r = run_tool(d_->home(), "mkdef -t group compute mgt=ipmi arch=x86_64");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "mkdef 'cn[01-12]' groups=compute,all bmcpassword=secret");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "mkdef outside groups=other,all mgt=kvm");
    ASSERT_EQ(r.rc, 0) << r.out;
    // install status: two booted, one installing, the rest unset
    r = run_tool(d_->home(), "chdef cn03,cn11 status=booted");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "chdef cn07 status=installing");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "mkdef ghost groups=all hidden=1");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin");
    ASSERT_EQ(r.rc, 0) << r.out;
    // alice may list the compute nodes only
    r = run_tool(d_->home(),
                 "mkdef -t policy -o 6 name=alice commands=lsdef noderange=compute rule=allow");
    ASSERT_EQ(r.rc, 0) << r.out;
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  cws::test::reply table(const std::string& query) {
    return client.get(d_->url("/nodetable", "&" + query));
  }

  cws::test::reply as_alice(const std::string& path) {
    auto sep = path.find('?') == std::string::npos ? "?" : "&";
    return client.get("/clusterws" + path + sep + "userName=alice&userPW=alicepw");
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* nodetable_test::dir_ = nullptr;
cws::test::daemon* nodetable_test::d_ = nullptr;

TEST_F(nodetable_test, pages_hold_the_nodes_in_name_order_with_the_total) {
  auto r = table("limit=5");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"total":13,"offset":0,"rows":[{"node":"cn01"},{"node":"cn02"},)"
                    R"({"node":"cn03"},{"node":"cn04"},{"node":"cn05"}]})"
                    "\n");
  r = table("offset=10&limit=5");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(row_names(r.body), (std::vector<std::string>{"cn11", "cn12", "outside"}));
  EXPECT_NE(r.body.find(R"("total":13,"offset":10)"), std::string::npos) << r.body;
  // past the end: no rows, the total still
  r = table("offset=100");
  EXPECT_EQ(r.body, R"({"total":13,"offset":100,"rows":[]})"
                    "\n");
  // the names as GET /nodes lists them (hidden nodes left out there too)
  auto nodes = client.get(d_->url("/nodes"));
  ASSERT_EQ(nodes.status, 200u);
  EXPECT_EQ(nodes.body.find("ghost"), std::string::npos);
  r = table("limit=50");
  std::string listed = "[";
  for (const auto& n : row_names(r.body)) {
    listed += (listed.size() > 1 ? ",\"" : "\"") + n + "\"";
  }
  EXPECT_EQ(listed + "]\n", nodes.body);
}

TEST_F(nodetable_test, rows_carry_the_asked_attributes_as_lsdef_shows_them) {
  auto r = table("noderange=cn01,outside&attrs=mgt,groups,arch,status");
  ASSERT_EQ(r.status, 200u) << r.body;
  // group-inherited values, unset ones empty, in the order asked
  EXPECT_EQ(r.body, R"({"total":2,"offset":0,"rows":[)"
                    R"({"node":"cn01","mgt":"ipmi","groups":"compute,all","arch":"x86_64",)"
                    R"("status":""},)"
                    R"({"node":"outside","mgt":"kvm","groups":"other,all","arch":"",)"
                    R"("status":""}]})"
                    "\n");
  // `node` is the row's name, not a column
  r = table("noderange=cn01&attrs=node,mgt,mgt");
  EXPECT_EQ(r.body, R"({"total":1,"offset":0,"rows":[{"node":"cn01","mgt":"ipmi"}]})"
                    "\n");
}

TEST_F(nodetable_test, sorting_by_an_attribute_keeps_name_order_among_equals) {
  auto r = table("noderange=compute&sort=status&order=desc&attrs=status&limit=4");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(row_names(r.body), (std::vector<std::string>{"cn07", "cn03", "cn11", "cn01"}));
  r = table("noderange=compute&sort=status&limit=50");
  auto names = row_names(r.body);
  ASSERT_EQ(names.size(), 12u);
  EXPECT_EQ(names.front(), "cn01"); // unset first
  EXPECT_EQ((std::vector<std::string>{names[9], names[10], names[11]}),
            (std::vector<std::string>{"cn03", "cn11", "cn07"}));
  r = table("sort=node&order=desc&limit=2");
  EXPECT_EQ(row_names(r.body), (std::vector<std::string>{"outside", "cn12"}));
}

TEST_F(nodetable_test, bad_parameters_are_refused_with_400_and_what_is_wrong) {
  struct bad {
    const char* query;
    const char* says;
  };
  for (auto b : {bad{"limit=0", "limit must be a whole number from 1 to 50"},
                 bad{"limit=51", "(nodetable_max_rows)"}, bad{"limit=ten", "limit must be"},
                 bad{"offset=-1", "offset must be a whole number"},
                 bad{"order=up", "order ('up') must be asc or desc."},
                 bad{"sort=bogus", "sort must be 'node' or a node attribute"},
                 bad{"attrs=mgt,bogus", "bogus"}}) {
    auto r = table(b.query);
    EXPECT_EQ(r.status, 400u) << b.query << ": " << r.body;
    EXPECT_NE(r.body.find(b.says), std::string::npos) << b.query << ": " << r.body;
    EXPECT_NE(r.body.find(R"("errorcode":"2")"), std::string::npos) << r.body;
  }
  EXPECT_EQ(table("limit=50").status, 200u);
}

TEST_F(nodetable_test, a_bad_noderange_is_answered_as_get_nodes_answers_it) {
  for (std::string range : {"nosuch", "cn01,nosuch", "%28cn01", "cn%5B1-999999999%5D"}) {
    auto nodes = client.get(d_->url("/nodes/" + range));
    auto r = table("noderange=" + range);
    EXPECT_GE(nodes.status, 400u) << range;
    EXPECT_EQ(r.status, nodes.status) << range << ": " << r.body;
    EXPECT_EQ(r.body, nodes.body) << range;
  }
}

TEST_F(nodetable_test, policy_is_lsdef_as_for_get_nodes) {
  // alice's row names the compute nodes: those she may list, not the others
  auto r = as_alice("/nodetable?noderange=compute&limit=50");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(row_names(r.body).size(), 12u);
  auto refused = as_alice("/nodes/outside");
  r = as_alice("/nodetable?noderange=outside");
  EXPECT_EQ(r.status, refused.status);
  EXPECT_EQ(r.body, refused.body);
  EXPECT_EQ(as_alice("/nodetable").status, as_alice("/nodes").status);
  // and the BMC password as lsdef shows it to her; root reads it
  r = as_alice("/nodetable?noderange=cn01&attrs=bmcpassword");
  EXPECT_NE(r.body.find(R"("bmcpassword":"********")"), std::string::npos) << r.body;
  r = table("noderange=cn01&attrs=bmcpassword");
  EXPECT_NE(r.body.find(R"("bmcpassword":"secret")"), std::string::npos) << r.body;
  // no credentials: 401
  EXPECT_EQ(client.get("/clusterws/nodetable").status, 401u);
}

TEST_F(nodetable_test, the_column_names_are_the_node_attributes) {
  auto r = client.get("/clusterws/nodetable/attributes");
  ASSERT_EQ(r.status, 200u) << r.body;
  for (auto a : {"\"bmc\"", "\"groups\"", "\"mgt\"", "\"status\"", "\"arch\""}) {
    EXPECT_NE(r.body.find(a), std::string::npos) << a;
  }
  EXPECT_EQ(r.body.find("\"node\""), std::string::npos);
}

} // namespace
