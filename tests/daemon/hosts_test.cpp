// POST /nodes/{noderange}/host and /services/host of a real clusterwsd whose hosts_file is a
// temporary file: xcatws.cgi's answers (201, no body), dryrun=1, errors, policy.

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;
using cws::test::slurp;

class hosts_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    std::ofstream{home / "clusterws.conf", std::ios::app} << "hosts_file = " << hosts().string()
                                                          << "\n";
    ASSERT_EQ(run_tool(home, "chdef -t site clustersite domain=cluster.local").rc, 0);
    ASSERT_EQ(run_tool(home, "mkdef 'cn[1-3]' groups=compute,all "
                             "'ip=|cn(\\d+)|10.0.0.($1)|'")
                .rc,
              0);
    ASSERT_EQ(run_tool(home, "mkdef bad groups=all ip=10.0.0.300").rc, 0);
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    delete d_;
    delete dir_;
  }

  void SetUp() override {
    std::ofstream{hosts(), std::ios::trunc} << "127.0.0.1 localhost\n192.168.1.1 gw\n";
  }

  static std::filesystem::path hosts() {
    return dir_->path / "hosts";
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* hosts_test::dir_ = nullptr;
cws::test::daemon* hosts_test::d_ = nullptr;

TEST_F(hosts_test, post_nodes_host_writes_the_nodes_lines_and_answers_201_with_no_body) {
  auto r = client.request("POST", d_->url("/nodes/cn1,cn2/host"), "");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n192.168.1.1 gw\n"
                            "10.0.0.1 cn1 cn1.cluster.local \n10.0.0.2 cn2 cn2.cluster.local \n");
}

TEST_F(hosts_test, post_services_host_writes_every_node_and_reports_xcats_errors) {
  // every node: `bad` has an invalid address, an error (the others still written, as xCAT)
  auto r = client.request("POST", d_->url("/services/host"), "");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_EQ(r.body,
            "{\"error\":[\"Invalid IP Addr '10.0.0.300' for node 'bad'.\"],\"errorcode\":\"1\"}\n");
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n192.168.1.1 gw\n"
                            "10.0.0.1 cn1 cn1.cluster.local \n10.0.0.2 cn2 cn2.cluster.local \n"
                            "10.0.0.3 cn3 cn3.cluster.local \n");
}

TEST_F(hosts_test, dryrun_answers_the_diff_and_writes_nothing) {
  struct stat before {};
  ASSERT_EQ(::stat(hosts().c_str(), &before), 0);
  auto r = client.request("POST", d_->url("/nodes/cn3/host", "&dryrun=1"), "");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto p = hosts().string();
  EXPECT_EQ(r.body, "[\"--- " + p + "\",\"+++ " + p
                      + "\",\"@@ -1,2 +1,3 @@\",\" 127.0.0.1 localhost\",\" 192.168.1.1 gw\","
                        "\"+10.0.0.3 cn3 cn3.cluster.local \"]\n");
  struct stat after {};
  ASSERT_EQ(::stat(hosts().c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n192.168.1.1 gw\n");
}

TEST_F(hosts_test, unknown_nodes_and_methods_are_refused_and_change_nothing) {
  auto r = client.request("POST", d_->url("/nodes/nosuch/host"), "");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("nosuch"), std::string::npos) << r.body;
  EXPECT_EQ(client.request("GET", d_->url("/nodes/cn1/host"), "").status, 405u);
  EXPECT_EQ(client.request("DELETE", d_->url("/services/host"), "").status, 405u);
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n192.168.1.1 gw\n");
}

TEST_F(hosts_test, non_root_needs_a_policy_row_naming_makehosts) {
  ASSERT_EQ(run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
  auto url = "/clusterws/nodes/cn1/host?userName=alice&userPW=alicepw";
  auto r = client.request("POST", url, "");
  EXPECT_EQ(r.status, 401u) << r.body;
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n192.168.1.1 gw\n");
  ASSERT_EQ(
    run_tool(d_->home(), "mkdef -t policy -o 6 name=alice rule=allow commands=makehosts").rc, 0);
  r = client.request("POST", url, "");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(slurp(hosts()),
            "127.0.0.1 localhost\n192.168.1.1 gw\n10.0.0.1 cn1 cn1.cluster.local \n");
  // audited as a change
  auto audit = slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("\"user\":\"alice\",\"method\":\"POST\",\"path\":\"/clusterws/nodes/cn1/"
                       "host\",\"noderange\":\"cn1\",\"status\":201"),
            std::string::npos)
    << audit;
  run_tool(d_->home(), "rmdef -t policy -o 6");
}

} // namespace
