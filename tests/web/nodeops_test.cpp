// The action bar and the node page in a real browser (tests/web/nodeops.mjs) against a real
// daemon whose nodes have ipmi_sim BMCs: a selection made in the node table powered off and on
// (the confirm step, the results folded as xcoll, a dead BMC's node with the API's words, the
// table's Power column following the power events), "Node status" over nodes on loopback
// addresses filling the table's nodestat column, the node page's power line,
// next boot, beacon, vitals, inventory and event log, an attribute edited and a bad value
// refused. Afterwards the BMCs' own logs say what they were told.

#include <gtest/gtest.h>

#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "../support/bmc_content.hpp"
#include "../support/browser.hpp"
#include "../support/farm_suite.hpp"
#include "../support/silent_port.hpp"

namespace {

using cws::test::run_tool;

class nodeops_test : public cws::test::farm_suite<nodeops_test> {
 protected:
  static void SetUpTestSuite() {
    if (!cws::test::have_ipmi_sim() || ::access("/usr/bin/sdrcomp", X_OK) != 0
        || !cws::test::browser_available()) {
      return;
    }
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 4);
    farm_->set_hardware(0, cws::test::sample_hardware()); // op01's vitals and inventory
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    // the dead BMC costs ipmitimeout x ipmiretries: 2 s per call over the group
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=2");
    run_tool(home, "mkdef -t group ops mgt=ipmi bmcusername=admin bmcpassword=secret");
    for (size_t i = 0; i < 4; ++i) {
      auto name = i == 3 ? std::string{"opdead"} : "op0" + std::to_string(i + 1);
      auto r = run_tool(home, "mkdef " + name + " groups=ops,all bmc=127.0.0.1 bmcport="
                                + std::to_string(farm_->port(i)));
      ASSERT_EQ(r.rc, 0) << r.out;
    }
    run_tool(home, "chdef op01 ip=10.1.0.11");
    // nodestat's nodes (as in tests/daemon/nodestat_test.cpp): probe01 on 127.0.0.1 where a
    // listener accepts (its sshport and the one probed application, "https"), probe02 on
    // 127.0.0.2 where every port refuses (up, nothing listening), probe03 on 127.0.0.3 where
    // every probed port drops the SYN (dead)
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listener_, 64), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    auto app = ntohs(a.sin_port);
    silent_
      = {new cws::test::silent_port("127.0.0.3"), new cws::test::silent_port("127.0.0.3", app)};
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "nodestat_timeout_ms = 1000\nnodestat_ports = https:" << app << "\n";
    auto port = std::to_string(app);
    ASSERT_EQ(run_tool(home, "mkdef probe01 groups=probe,all ip=127.0.0.1 sshport=" + port).rc, 0);
    run_tool(home, "mkdef probe02 groups=probe,all ip=127.0.0.2 sshport=" + port);
    run_tool(home, "mkdef probe03 groups=probe,all ip=127.0.0.3 sshport="
                     + std::to_string(silent_[0]->port()));
    farm_->stop(3);
    for (size_t i = 0; i < 3; ++i) {
      farm_->set_power(i, true);
    }
    // one entry in op01's event log (set_hardware's BMC starts without a SEL)
    farm_->emu(0, "sel_enable 0x20 1000 0x0a");
    auto out = farm_->emu(0, "sel_add 0x20 2 0 0 0 0 0x20 0 4 0x01 48 0x01 0x09 0x50 0x60");
    ASSERT_NE(out.find("Added record"), std::string::npos) << out;
    d_->start();
  }

  static void TearDownTestSuite() {
    farm_suite::TearDownTestSuite(); // the daemon first: nothing probes what is closed next
    for (auto* p : silent_) {
      delete p;
    }
    silent_.clear();
    if (listener_ >= 0) {
      ::close(listener_);
      listener_ = -1;
    }
  }

  static inline int listener_ = -1;
  static inline std::vector<cws::test::silent_port*> silent_;
};

TEST_F(nodeops_test, a_table_selection_is_powered_and_probed_and_a_node_is_read_and_edited) {
  auto r
    = cws::test::run_browser(*d_, "nodeops.mjs", "root", "rootpw", cws::test::shots_dir(dir_->path),
                             {{"NODEOPS_GROUP", "ops"},
                              {"NODEOPS_LIVE", "op01,op02,op03"},
                              {"NODEOPS_DEAD", "opdead"},
                              {"NODEOPS_FOLD", "op[01-03]"},
                              {"NODEOPS_PROBE", "probe"}});
  ASSERT_EQ(r.rc, 0) << r.out;
  // what each BMC was told: off and on for the selection; for op01 also off from the page (and
  // left off by the API), next boot from the network and the beacon on
  for (size_t i = 0; i < 3; ++i) {
    auto log = farm_->log(i);
    EXPECT_NE(log.find("set power 0"), std::string::npos) << i << ": " << log;
    EXPECT_NE(log.find("set power 1"), std::string::npos) << i << ": " << log;
  }
  EXPECT_EQ(farm_->power(0), "0");
  EXPECT_EQ(farm_->power(1), "1");
  EXPECT_EQ(farm_->power(2), "1");
  EXPECT_EQ(farm_->boot(0), "pxe");
  EXPECT_NE(farm_->log(0).find("set identify 0 1\n"), std::string::npos) << farm_->log(0);
  // the reset whose confirm was cancelled reached no BMC
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(farm_->log(i).find("reset"), std::string::npos) << farm_->log(i);
  }
  // the value saved from the page, then another client's, and not the refused one
  EXPECT_EQ(run_tool(d_->home(), "lsdef op01 -i ip -c").out, "op01: ip=10.1.0.13\n");
}

} // namespace
