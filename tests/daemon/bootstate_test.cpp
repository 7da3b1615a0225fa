// nodeset over REST: GET/PUT /nodes/{noderange}/bootstate of a real clusterwsd, in xCAT's
// shapes (xcatws.cgi: actionout for GET, an empty 200 for PUT), policy and audit.

#include <gtest/gtest.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;

class bootstate_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    auto r = run_tool(home, "mkdef -t osimage -o debian12-x86_64-install-compute imagetype=linux "
                            "provmethod=install osname=Linux osvers=debian12 osarch=x86_64 "
                            "profile=compute");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(home, "mkdef 'cn[01-03]' groups=compute,all");
    ASSERT_EQ(r.rc, 0) << r.out;
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    delete d_;
    delete dir_;
  }

  cws::test::reply call(const std::string& method, const std::string& path,
                        const std::string& body = "", const std::string& extra = "") {
    return client.request(method, d_->url(path, extra), body);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* bootstate_test::dir_ = nullptr;
cws::test::daemon* bootstate_test::d_ = nullptr;

TEST_F(bootstate_test, get_and_put_in_xcat_shapes) {
  auto r = call("GET", "/nodes/cn01,cn02/bootstate");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"cn01":{"bootstate":"offline"},"cn02":{"bootstate":"offline"}})"
                    "\n");
  r = call("PUT", "/nodes/compute/bootstate", R"({"osimage":"debian12-x86_64-install-compute"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "");
  r = call("GET", "/nodes/cn03/bootstate");
  EXPECT_EQ(r.body, R"({"cn03":{"bootstate":"install debian12-x86_64-compute"}})"
                    "\n");
  EXPECT_EQ(run_tool(d_->home(), "lsdef cn03 -i os,currchain -c").out,
            "cn03: currchain=boot\ncn03: os=debian12\n");
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("osimage=debian12-x86_64-install-compute"), std::string::npos) << audit;
  r = call("PUT", "/nodes/cn01/bootstate", R"({"action":"boot"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = call("PUT", "/nodes/cn02/bootstate", R"({"state":"offline"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = call("GET", "/nodes/compute/bootstate");
  EXPECT_EQ(r.body, R"({"cn01":{"bootstate":"boot"},"cn02":{"bootstate":"offline"},)"
                    R"("cn03":{"bootstate":"install debian12-x86_64-compute"}})"
                    "\n");
}

TEST_F(bootstate_test, bad_requests_are_refused_and_change_nothing) {
  auto before = call("GET", "/nodes/compute/bootstate").body;
  auto r = call("PUT", "/nodes/cn01/bootstate", R"({})");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("Missed Action."), std::string::npos) << r.body;
  r = call("PUT", "/nodes/compute/bootstate", R"({"osimage":"nosuch"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Cannot find the OS image nosuch on the osimage table."), std::string::npos)
    << r.body;
  r = call("PUT", "/nodes/cn01/bootstate", R"({"action":"explode"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Unknown state explode requested"), std::string::npos) << r.body;
  r = call("PUT", "/nodes/cn01,nosuch/bootstate", R"({"action":"boot"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Invalid nodes and/or groups in noderange: nosuch"), std::string::npos);
  EXPECT_EQ(call("GET", "/nodes/compute/bootstate").body, before);
}

TEST_F(bootstate_test, dryrun_answers_the_diff_and_changes_nothing) {
  auto r = call("PUT", "/nodes/cn03/bootstate", R"({"action":"boot"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  r = call("PUT", "/nodes/cn03/bootstate", R"({"state":"offline"})", "&dryrun=1");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"x(["--- cn03 (store)","+++ cn03 (nodeset)","@@ -1 +1 @@",)x"
                    R"("-chain.currstate=boot","+chain.currstate=offline"])"
                    "\n");
  EXPECT_EQ(call("GET", "/nodes/cn03/bootstate").body, R"({"cn03":{"bootstate":"boot"}})"
                                                       "\n");
  r = call("PUT", "/nodes/cn03/bootstate", R"({"osimage":"nosuch"})", "&dryrun=1");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("Cannot find the OS image nosuch on the osimage table."), std::string::npos)
    << r.body;
}

TEST_F(bootstate_test, rest_needs_a_policy_row_naming_nodeset) {
  run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin");
  auto url = "/clusterws/nodes/cn01/bootstate?userName=alice&userPW=alicepw";
  EXPECT_EQ(client.request("GET", url, "").status, 401u);
  EXPECT_EQ(client.request("PUT", url, R"({"action":"boot"})").status, 401u);
  run_tool(d_->home(), "mkdef -t policy -o 6 name=alice rule=allow commands=nodeset");
  auto r = client.request("PUT", url, R"({"action":"boot"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = client.request("GET", url, "");
  EXPECT_EQ(r.status, 200u) << r.body;
  run_tool(d_->home(), "rmdef -t policy -o 6");
}

} // namespace
