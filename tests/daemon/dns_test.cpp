// makedns over REST (xcatws shapes): a real clusterwsd and a real named of the test's own
// (foreground, 127.0.0.1, a free port), dig asking named what the calls made it hold.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

namespace fs = std::filesystem;
using cws::test::run_tool;
using cws::test::slurp;

class dns_test : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = cws::test::free_port();
    conf_ = dir_.path / "conf";
    fs::create_directories(conf_);
    fs::create_directories(dir_.path / "zones");
    std::ofstream{conf_ / "clusterws.conf"} << "";
    std::ofstream{conf_ / "clusterws-options.conf"} << "";
    std::ofstream{dir_.path / "named.conf"}
      << "options {\n  directory \"" << (dir_.path / "zones").string() << "\";\n  pid-file \""
      << (dir_.path / "named.pid").string() << "\";\n  listen-on port " << port_
      << " { 127.0.0.1; };\n  listen-on-v6 { none; };\n  recursion no;\n  include \""
      << (conf_ / "clusterws-options.conf").string() << "\";\n};\ncontrols { };\ninclude \""
      << (conf_ / "clusterws.conf").string() << "\";\n";
    named_ = ::fork();
    if (named_ == 0) {
      int fd = ::open((dir_.path / "named.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execlp("named", "named", "-g", "-c", (dir_.path / "named.conf").c_str(), "-u", "root",
               nullptr);
      ::_exit(127);
    }
    bool running = false;
    for (int i = 0; i < 100 && !running; ++i) {
      running = slurp(dir_.path / "named.log").find("running") != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(running) << slurp(dir_.path / "named.log");
    d_ = std::make_unique<cws::test::daemon>(dir_.path / "home", "rootpw");
    auto home = d_->home();
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "dns_conf_dir = " << conf_.string()
      << "\ndns_zone_dir = " << (dir_.path / "zones").string()
      << "\ndns_server = 127.0.0.1:" << port_
      << "\ndns_key_file = " << (conf_ / "clusterws.key").string()
      << "\ndns_reload_command = kill -HUP " << named_
      << "\naudit_log = " << (dir_.path / "audit.log").string() << "\n";
    ASSERT_EQ(run_tool(home, "chdef -t site clustersite domain=cluster.test master=10.77.0.1").rc,
              0);
    ASSERT_EQ(run_tool(home, "mkdef -t network -o net77 net=10.77.0.0 mask=255.255.255.0").rc, 0);
    ASSERT_EQ(run_tool(home, "mkdef -t node -o n1,n2 groups=compute").rc, 0);
    ASSERT_EQ(run_tool(home, "chdef n1 ip=10.77.0.11").rc, 0);
    ASSERT_EQ(run_tool(home, "chdef n2 ip=10.77.0.12").rc, 0);
    d_->start();
  }

  void TearDown() override {
    if (d_) {
      d_->stop();
    }
    if (named_ > 0) {
      ::kill(named_, SIGTERM);
      int status = 0;
      ::waitpid(named_, &status, 0);
    }
  }

  std::string dig(const std::string& args) const {
    return run_tool(d_->home(), "dig @127.0.0.1 -p " + std::to_string(port_)
                                  + " +short +time=2 +tries=1 " + args)
      .out;
  }

  cws::test::temp_dir dir_;
  fs::path conf_;
  unsigned short port_ = 0;
  pid_t named_ = -1;
  std::unique_ptr<cws::test::daemon> d_;
};

TEST_F(dns_test, services_dns_and_nodes_dns_drive_named_as_makedns_does) {
  cws::test::https_client c{d_->ca(), d_->port()};
  // dry run: the lines makedns -n --dry-run prints, nothing written
  auto r = c.request("POST", d_->url("/services/dns", "&dryrun=1"));
  ASSERT_EQ(r.status, 200u) << r.body << slurp(d_->log());
  EXPECT_NE(r.body.find("\"update cluster.test: add n1.cluster.test. 86400 IN A 10.77.0.11\""),
            std::string::npos)
    << r.body;
  EXPECT_EQ(slurp(conf_ / "clusterws.conf"), "");
  // POST /services/dns: makedns -n, 201 and an empty body (xcatws)
  r = c.request("POST", d_->url("/services/dns"));
  ASSERT_EQ(r.status, 201u) << r.body << slurp(d_->log());
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(dig("n1.cluster.test A"), "10.77.0.11\n");
  EXPECT_EQ(dig("-x 10.77.0.12"), "n2.cluster.test.\n");
  // POST /nodes/{nr}/dns for a node added later: one signed update
  ASSERT_EQ(run_tool(d_->home(), "mkdef -t node -o n3 groups=compute ip=10.77.0.13").rc, 0);
  r = c.request("POST", d_->url("/nodes/n3/dns"));
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(dig("n3.cluster.test A"), "10.77.0.13\n");
  // DELETE /nodes/{nr}/dns: makedns -d, 200
  r = c.request("DELETE", d_->url("/nodes/n3/dns"));
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(dig("n3.cluster.test A"), "");
  EXPECT_EQ(dig("n1.cluster.test A"), "10.77.0.11\n");
  // an unknown node: refused in xCAT's words, nothing sent
  r = c.request("POST", d_->url("/nodes/nosuch/dns"));
  EXPECT_GE(r.status, 400u);
  EXPECT_NE(r.body.find("nosuch"), std::string::npos) << r.body;
  // audited as the writes are, under policy command makedns
  auto audit = slurp(dir_.path / "audit.log");
  EXPECT_NE(audit.find("/services/dns"), std::string::npos) << audit;
  EXPECT_NE(audit.find("/nodes/n3/dns"), std::string::npos) << audit;
}

} // namespace
