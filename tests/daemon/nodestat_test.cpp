// nodestat end to end, the tool and GET /nodes/{noderange}/nodestat of a real clusterwsd:
// "nodes" on 127.0.0.1 (the sshd fixture, an application port that accepts), 127.0.0.2
// (every port refused: up, no application) and 127.0.0.3 (every probed port silent: dead).

#include <gtest/gtest.h>

#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/metrics_sample.hpp"
#include "../support/silent_port.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::run_tool;

class nodestat_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    // "https": a listener on 127.0.0.1 that the kernel accepts for; "pbs": nobody listens
    https_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(https_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(https_, 4096);
    socklen_t len = sizeof a;
    getsockname(https_, reinterpret_cast<sockaddr*>(&a), &len);
    auto https = ntohs(a.sin_port);
    auto pbs = cws::test::free_port();
    // the dead address: every port probed there drops the SYN
    dead_
      = {new cws::test::silent_port("127.0.0.3"), new cws::test::silent_port("127.0.0.3", https),
         new cws::test::silent_port("127.0.0.3", pbs)};
    auto home = d_->home();
    {
      std::ofstream conf{home / "clusterws.conf", std::ios::app};
      conf << "nodestat_timeout_ms = 1500\nnodestat_ports = https:" << https << ",pbs:" << pbs
           << "\n";
    }
    auto sshport = std::to_string(farm_->port());
    run_tool(home, "mkdef -t group farm sshport=" + sshport);
    auto r = run_tool(home, "mkdef 'up[01-03]' groups=farm,all ip=127.0.0.1");
    ASSERT_EQ(r.rc, 0) << r.out;
    run_tool(home, "mkdef ping01 groups=farm,all ip=127.0.0.2");
    run_tool(home, "mkdef boot01 groups=farm,all ip=127.0.0.2 currstate=boot");
    run_tool(home, "mkdef 'dead[01-02]' groups=all ip=127.0.0.3 sshport="
                     + std::to_string(dead_[0]->port()));
    farm_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    farm_->stop();
    ::close(https_);
    for (auto* p : dead_) {
      delete p;
    }
    delete d_;
    delete farm_;
    delete dir_;
  }

  static cws::test::command_result tool(const std::string& cmd) {
    return run_tool(d_->home(), cmd);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static int https_;
  static std::vector<cws::test::silent_port*> dead_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* nodestat_test::dir_ = nullptr;
cws::test::sshd* nodestat_test::farm_ = nullptr;
cws::test::daemon* nodestat_test::d_ = nullptr;
int nodestat_test::https_ = -1;
std::vector<cws::test::silent_port*> nodestat_test::dead_;

constexpr const char* all_states = "boot01: boot\n"
                                   "dead01: noping\n"
                                   "dead02: noping\n"
                                   "ping01: ping\n"
                                   "up01: https,sshd\n"
                                   "up02: https,sshd\n"
                                   "up03: https,sshd\n";

TEST_F(nodestat_test, the_tool_prints_each_nodes_state_as_xcat_does) {
  auto r = tool("nodestat all");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, all_states);
  // -m: without a monsetting table xCAT probes the same applications
  EXPECT_EQ(tool("nodestat all -m").out, all_states);
  EXPECT_EQ(tool("nodestat --usemon up01").out, "up01: https,sshd\n");
}

TEST_F(nodestat_test, bad_input_is_refused_and_nothing_is_probed_or_written) {
  auto r = tool("nodestat up01 -p -u");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("nodestat -p needs rpower"), std::string::npos) << r.out;
  EXPECT_EQ(tool("lsdef up01 -i status -c").out, "up01: status=\n");
  r = tool("nodestat nosuch,up01");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "Error: Invalid nodes and/or groups in noderange: nosuch\n");
  r = tool("nodestat");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos);
  EXPECT_EQ(tool("nodestat -x up01").rc, 1);
  EXPECT_EQ(tool("nodestat -v").out, "nodestat - clusterws Version 0.1.0\n");
}

TEST_F(nodestat_test, a_bad_ports_setting_stops_the_tools_and_the_daemon) {
  cws::test::temp_dir fresh;
  auto home = fresh.path / "h";
  ASSERT_EQ(run_tool(home, "clusterctl init --admin-password x").rc, 0);
  std::ofstream{home / "clusterws.conf", std::ios::app} << "nodestat_ports = https:443,pbs\n";
  for (const auto& cmd : {std::string{"nodestat all"}, std::string{"lsdef"},
                          "clusterwsd --home '" + home.string() + "' --listen 127.0.0.1:0"}) {
    auto r = run_tool(home, cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_NE(r.out.find("nodestat_ports: 'pbs' is not name:port"), std::string::npos)
      << cmd << ": " << r.out;
  }
}

TEST_F(nodestat_test, updatedb_writes_status_and_merges_appstatus) {
  tool("chdef up02 appstatus=gpfs=ok,sshd=down");
  auto r = tool("nodestat up02,dead01,boot01 -u -q");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, ""); // -q: quiet
  auto l = tool("lsdef up02,dead01,boot01 -i status,appstatus -c").out;
  EXPECT_NE(l.find("up02: status=ping\n"), std::string::npos) << l;
  EXPECT_NE(l.find("up02: appstatus=gpfs=ok,sshd=up,https=up,pbs=down\n"), std::string::npos) << l;
  EXPECT_NE(l.find("dead01: status=noping\n"), std::string::npos) << l;
  EXPECT_NE(l.find("boot01: status=boot\n"), std::string::npos) << l;
  EXPECT_NE(tool("lsdef up02 -i statustime -c").out.find(" "), std::string::npos);
  tool("chdef up02,dead01,boot01 status= statustime= appstatus= appstatustime=");
}

TEST_F(nodestat_test, rest_answers_with_xcats_actionout) {
  auto r = client.request("GET", d_->url("/nodes/up01,dead01,boot01,ping01/nodestat"), "");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "{\"boot01\":{\"nodestat\":\"boot\"},\"dead01\":{\"nodestat\":\"noping\"},"
                    "\"ping01\":{\"nodestat\":\"ping\"},\"up01\":{\"nodestat\":\"https,sshd\"}}\n");
  r = client.request("GET", d_->url("/nodes/up01,nosuch/nodestat"), "");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Invalid nodes and/or groups in noderange: nosuch"), std::string::npos);
  r = client.request("POST", d_->url("/nodes/up01/nodestat"), "{}");
  EXPECT_EQ(r.status, 405u);
}

TEST_F(nodestat_test, the_prober_counts_its_runs_and_nodes) {
  auto before = client.get(d_->url("/metrics")).body;
  auto r = client.request("GET", d_->url("/nodes/up01,dead01,ping01/nodestat"), "");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto after = client.get(d_->url("/metrics")).body;
  using cws::test::metric_growth;
  EXPECT_EQ(metric_growth(before, after, "clusterws_probe_runs_total"), 1) << after;
  // probed is ok, whatever the ports said (noping too)
  EXPECT_EQ(metric_growth(before, after, "clusterws_probe_nodes_total{result=\"ok\"}"), 3) << after;
  EXPECT_EQ(cws::test::metric_sample(after, "clusterws_probe_nodes_in_flight"), 0) << after;
}

TEST_F(nodestat_test, rest_needs_a_policy_row_naming_nodestat) {
  tool("echo alicepw | clusterctl passwd alice --password-stdin");
  auto url = "/clusterws/nodes/up01/nodestat?userName=alice&userPW=alicepw";
  EXPECT_EQ(client.request("GET", url, "").status, 401u);
  tool("mkdef -t policy -o 6 name=alice rule=allow commands=nodestat");
  auto r = client.request("GET", url, "");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "{\"up01\":{\"nodestat\":\"https,sshd\"}}\n");
  tool("rmdef -t policy -o 6");
}

} // namespace
