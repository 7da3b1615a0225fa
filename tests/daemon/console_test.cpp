// The console server inside a real clusterwsd against real ipmi_sim BMCs with Serial-over-LAN:
// the test holds each BMC's serial side (the TCP listener ipmi_sim connects to) and checks the
// node's log file, GET /nodes/{node}/console/log, a BMC killed and restarted (the gap noted),
// a wrong password (a per-node error in makeconservercf -V and the metrics), rotation at the
// size limit, console_max, makeconservercf -d, the rcons policy on the log, and cons=kvm
// consoles libvirt refuses (its test driver) as errors of their nodes.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "../support/sol_console_fixture.hpp"

namespace {

using namespace cws::test;
using namespace std::chrono_literals;

class console_test : public sol_console_fixture {};

TEST_F(console_test, serial_text_reaches_the_nodes_log_file_and_the_log_api) {
  start(1, "");
  define("cn1", 0);
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "[-- clusterws: console up -- "); }))
    << slurp(log_of("cn1")) << slurp(d_->log());
  type(0, "kernel: hello from the serial side\r\nlogin: ");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "login: "); })) << slurp(log_of("cn1"));
  EXPECT_TRUE(log_has("cn1", "kernel: hello from the serial side\r\n"));
  auto r = get("/nodes/cn1/console/log", "&tail=1");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "login: ");
  r = get("/nodes/cn1/console/log", "&tail=2");
  EXPECT_EQ(r.body, "kernel: hello from the serial side\r\nlogin: ");
  r = get("/nodes/cn1/console/log", "&tail=x");
  EXPECT_EQ(r.status, 400u) << r.body;
  // a name that is no node reads nothing (not even another node's rotated file)
  r = get("/nodes/nosuch/console/log");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("nosuch"), std::string::npos) << r.body;
  // the metrics count it
  r = get("/metrics");
  EXPECT_NE(r.body.find("clusterws_consoles_up 1"), std::string::npos) << r.body;
}

TEST_F(console_test, a_bmc_killed_and_restarted_comes_back_and_the_log_notes_the_gap) {
  start(1, "");
  define("cn1", 0);
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); }));
  type(0, "before\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "before\r\n"); }));
  farm_->stop(0);
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "[-- clusterws: console lost: "); }))
    << slurp(log_of("cn1"));
  farm_->start(0);
  accept_serial(0);
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "[-- clusterws: console back -- "); }))
    << slurp(log_of("cn1"));
  type(0, "after\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "after\r\n"); })) << slurp(log_of("cn1"));
  auto text = slurp(log_of("cn1"));
  EXPECT_LT(text.find("before"), text.find("console lost"));
  EXPECT_LT(text.find("console lost"), text.find("console back"));
  EXPECT_LT(text.find("console back"), text.find("after"));
  auto r = get("/metrics");
  EXPECT_EQ(r.body.find("clusterws_console_reconnects_total 0"), std::string::npos) << r.body;
}

TEST_F(console_test, a_wrong_bmc_password_is_a_clear_error_of_that_node_only) {
  start(2, "");
  define("good", 0);
  define("bad", 1, "nope");
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("good", "console up"); }));
  ASSERT_TRUE(eventually([&] { return log_has("bad", "[-- clusterws: console lost: "); }))
    << slurp(log_of("bad"));
  auto r = run_tool(d_->home(), "makeconservercf -V");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("good: up"), std::string::npos) << r.out;
  auto bad = r.out.find("bad: ");
  ASSERT_NE(bad, std::string::npos) << r.out;
  auto line = r.out.substr(bad, r.out.find('\n', bad) - bad);
  EXPECT_NE(line.find(" ("), std::string::npos) << line; // the reason, while not up
  // the metrics: one failing, one up
  auto m = get("/metrics");
  EXPECT_NE(m.body.find("clusterws_consoles_failing 1"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("clusterws_consoles_up 1"), std::string::npos) << m.body;
  // the error log names the node
  EXPECT_NE(slurp(d_->log()).find("console bad: "), std::string::npos);
}

TEST_F(console_test, kvm_consoles_libvirt_cannot_open_are_errors_of_those_nodes_only) {
  // cons=kvm through libvirt's test driver: a real connection, whose only domain is "test"
  // and which has no consoles (virDomainOpenConsole is not supported there): node "test" is
  // refused for want of a console, vm1 for want of a domain; an ipmi node beside them is up
  start(1, "");
  define("good", 0);
  for (const auto* n : {"test", "vm1"}) {
    auto r = run_tool(d_->home(), std::string{"mkdef "} + n
                                    + " groups=all mgt=kvm cons=kvm vmhost=test:///default");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("good", "console up"); }));
  ASSERT_TRUE(eventually([&] {
    return log_has("test", "[-- clusterws: console lost: ") && log_has("vm1", "console lost: ");
  }))
    << slurp(log_of("test")) << slurp(log_of("vm1")) << slurp(d_->log());
  EXPECT_TRUE(log_has("test", "virDomainOpenConsole")) << slurp(log_of("test"));
  EXPECT_TRUE(log_has("vm1", "The virtual machine vm1 was not found on test:///default"))
    << slurp(log_of("vm1"));
  auto r = run_tool(d_->home(), "makeconservercf -V");
  EXPECT_NE(r.out.find("good: up"), std::string::npos) << r.out;
  auto line = [&](const std::string& node) {
    auto at = r.out.find(node + ": ");
    return at == std::string::npos ? std::string{} : r.out.substr(at, r.out.find('\n', at) - at);
  };
  EXPECT_NE(line("test").find("virDomainOpenConsole"), std::string::npos) << r.out;
  EXPECT_NE(line("vm1").find("was not found"), std::string::npos) << r.out;
  EXPECT_NE(slurp(d_->log()).find("console vm1: "), std::string::npos);
}

TEST_F(console_test, a_log_is_rotated_at_its_size_limit_keeping_console_log_keep_files) {
  start(1, "console_log_max_bytes = 4096\nconsole_log_keep = 2\n");
  define("cn1", 0);
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); }));
  std::string line(99, 'x');
  line += "\n";
  for (int i = 0; i < 150; ++i) { // 15,000 bytes: more than (keep + 1) files of 4 KiB
    type(0, std::to_string(i % 10) + line.substr(1));
    if (i % 10 == 9) {
      std::this_thread::sleep_for(20ms); // ipmi_sim's own buffer is 16 KiB
    }
  }
  type(0, "last line\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "last line\n"); }));
  auto base = log_of("cn1").string();
  EXPECT_TRUE(std::filesystem::exists(base + ".1"));
  EXPECT_TRUE(std::filesystem::exists(base + ".2"));
  EXPECT_FALSE(std::filesystem::exists(base + ".3"));
  for (auto p : {base, base + ".1", base + ".2"}) {
    EXPECT_LE(std::filesystem::file_size(p), 4096u) << p;
  }
}

TEST_F(console_test, console_max_holds_that_many_and_names_the_rest) {
  start(2, "console_max = 1\n");
  define("cn1", 0);
  define("cn2", 1);
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); }));
  auto r = run_tool(d_->home(), "makeconservercf");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("cn2: Error: not held: console_max (1) consoles are open"),
            std::string::npos)
    << r.out;
  EXPECT_FALSE(std::filesystem::exists(log_of("cn2")));
  // makeconservercf -d frees cn1's slot: cn2 is held
  r = run_tool(d_->home(), "makeconservercf -d cn1");
  EXPECT_EQ(r.rc, 0) << r.out;
  ASSERT_TRUE(eventually([&] { return log_has("cn2", "console up"); })) << slurp(d_->log());
  r = run_tool(d_->home(), "makeconservercf -V cn1");
  EXPECT_NE(r.out.find("cn1: Error: not held: console_max (1)"), std::string::npos) << r.out;
}

TEST_F(console_test, a_node_given_cons_later_is_held_and_its_log_needs_an_rcons_policy) {
  start(1, "");
  d_->start();
  define("cn1", 0); // after the start: the change feed brings it
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); }));
  run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin");
  https_client client{d_->ca(), d_->port()};
  auto url = "/clusterws/nodes/cn1/console/log?userName=alice&userPW=alicepw";
  auto r = client.request("GET", url);
  // a user no policy row allows `rcons` is refused as every such call is (401, as
  // bootstate_test's and eventlog_test's), and reads nothing
  EXPECT_EQ(r.status, 401u) << r.body;
  EXPECT_EQ(r.body.find("console up"), std::string::npos) << r.body;
  run_tool(d_->home(), "mkdef -t policy -o 6 name=alice rule=allow commands=rcons");
  r = client.request("GET", url);
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find("console up"), std::string::npos);
  // cons unset: no longer held
  run_tool(d_->home(), "chdef cn1 cons=");
  ASSERT_TRUE(eventually([&] {
    return run_tool(d_->home(), "makeconservercf -V").out.find("cn1") == std::string::npos;
  }));
}

} // namespace
