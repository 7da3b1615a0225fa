// reventlog and rbeacon over REST and the CLI against ipmi_sim BMCs on 127.0.0.1: xCAT's
// actionout shapes (eventlog as an array of lines, DELETE and PUT answering nothing), 404
// "Missed Action.", format=detail and stream=1 over a mixed range (a kvm node, which xCAT's kvm
// plugin serves neither, a dead BMC), the CLI's lines, and policy by command.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "../support/farm_suite.hpp"

namespace {

using cws::test::run_tool;

class eventlog_test : public cws::test::farm_suite<eventlog_test> {
 protected:
  static void SetUpTestSuite() {
    if (!cws::test::have_ipmi_sim()) {
      return;
    }
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 3);
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=2");
    run_tool(home, "mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret");
    for (size_t i = 0; i < 3; ++i) {
      auto name = i == 2 ? std::string{"deadbmc"} : "bmc" + std::to_string(i);
      auto r = run_tool(home, "mkdef " + name + " groups=bmcs,all bmc=127.0.0.1 bmcport="
                                + std::to_string(farm_->port(i)));
      ASSERT_EQ(r.rc, 0) << r.out;
    }
    farm_->stop(2);
    {
      std::ofstream xml{dir_->path / "vms.xml"};
      xml << "<node><domain type='test'><name>vm0</name><memory>65536</memory><os><type>hvm"
             "</type></os></domain></node>\n";
    }
    run_tool(home,
             "mkdef vm0 groups=all mgt=kvm vmhost=test://" + (dir_->path / "vms.xml").string());
    d_->start();
  }

  /// A temperature threshold event of `sensor` in BMC `i`'s log.
  static void add_event(size_t i, int sensor) {
    auto out = farm_->emu(i, "sel_add 0x20 2 0 0 0 0 0x20 0 4 0x01 " + std::to_string(sensor)
                               + " 0x01 0x09 0x50 0x60");
    ASSERT_NE(out.find("Added record"), std::string::npos) << out;
  }
};

constexpr const char* event_0x30 = "Temperature, Upper Critical - going high (Sensor 0x30)";

TEST_F(eventlog_test, eventlog_get_lists_lines_and_delete_clears) {
  add_event(0, 0x30);
  add_event(0, 0x31);
  auto r = call("GET", "/nodes/bmc0,bmc1/eventlog");
  ASSERT_EQ(r.status, 200u) << r.body;
  // {"bmc0":{"eventlog":["<time> ... (Sensor 0x30)","<time> ... (Sensor 0x31)"]},...}
  EXPECT_EQ(r.body.rfind(R"({"bmc0":{"eventlog":[")", 0), 0u) << r.body;
  auto first = r.body.find(event_0x30);
  auto second = r.body.find("(Sensor 0x31)\"]}");
  EXPECT_NE(first, std::string::npos) << r.body;
  EXPECT_NE(second, std::string::npos) << r.body;
  EXPECT_LT(first, second);
  EXPECT_NE(r.body.find(R"("bmc1":{"eventlog":["no SEL entries"]})"), std::string::npos);
  r = call("DELETE", "/nodes/bmc0/eventlog");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, ""); // xCAT's CGI has no output for it
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("\"command\":\"clear\""), std::string::npos) << audit; // a change
  EXPECT_EQ(audit.find("\"command\":\"all\""), std::string::npos) << audit;   // a read
  r = call("GET", "/nodes/bmc0/eventlog");
  EXPECT_EQ(r.body, R"({"bmc0":{"eventlog":["no SEL entries"]}})"
                    "\n");
  r = call("PUT", "/nodes/bmc0/eventlog", R"({"action":"clear"})");
  EXPECT_EQ(r.status, 405u) << r.body;
}

TEST_F(eventlog_test, mixed_range_in_detail_and_stream) {
  add_event(1, 0x30);
  auto r = call("GET", "/nodes/bmc1,vm0,deadbmc/eventlog");
  EXPECT_EQ(r.status, 403u) << r.body; // xCAT's: a failed node hides the others
  EXPECT_NE(r.body.find("vm0: Unable to identify plugin for this command, check relevant tables: "
                        "nodehm.mgt"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("deadbmc: timeout"), std::string::npos) << r.body;
  r = call("GET", "/nodes/bmc1,vm0,deadbmc/eventlog", {}, "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("bmc1":{"rc":0,"eventlog":[")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(event_0x30), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("vm0":{"rc":1,"error":"unsupported")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("deadbmc":{"rc":1,"error":"timeout")"), std::string::npos) << r.body;
  r = call("GET", "/nodes/bmc1,vm0/eventlog", {}, "&stream=1");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_NE(r.body.find(R"({"node":"bmc1","rc":0,"eventlog":[")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"({"node":"vm0","rc":1,"error":"unsupported")"), std::string::npos);
  EXPECT_NE(r.body.find(R"("done":"true","nodes":2,"failed":1)"), std::string::npos) << r.body;
  call("DELETE", "/nodes/bmc1/eventlog");
}

TEST_F(eventlog_test, beacon_put_reaches_the_bmc_and_stat_is_xcats_answer) {
  auto r = call("PUT", "/nodes/bmc0,bmc1/beacon", R"({"action":"on"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_NE(farm_->log(0).find("set identify 0 1\n"), std::string::npos) << farm_->log(0);
  EXPECT_NE(farm_->log(1).find("set identify 0 1\n"), std::string::npos) << farm_->log(1);
  r = call("PUT", "/nodes/bmc0/beacon", R"({"action":"off"})", "&format=detail");
  EXPECT_EQ(r.body, R"({"bmc0":{"rc":0,"beacon":"off"}})"
                    "\n");
  EXPECT_NE(farm_->log(0).find("set identify 0 0\n"), std::string::npos);
  auto before = farm_->log(0);
  r = call("PUT", "/nodes/bmc0/beacon", R"({})");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("Missed Action."), std::string::npos) << r.body;
  r = call("PUT", "/nodes/bmc0/beacon", R"({"action":"flash"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Unsupported command: rbeacon flash"), std::string::npos) << r.body;
  EXPECT_EQ(farm_->log(0), before); // nothing was sent
  // ipmi_sim does not report the identify state: xCAT's ipmi answer
  r = call("GET", "/nodes/bmc0/beacon");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("bmc0: please specify on or off for ipmi nodes (stat impossible)"),
            std::string::npos)
    << r.body;
  r = call("PUT", "/nodes/vm0/beacon", R"({"action":"on"})", "&format=detail");
  EXPECT_NE(r.body.find("Unable to identify plugin"), std::string::npos) << r.body;
}

TEST_F(eventlog_test, cli_reventlog_and_rbeacon_print_xcat_lines) {
  auto home = d_->home();
  for (int s : {0x40, 0x41, 0x42}) {
    add_event(0, s);
  }
  auto r = run_tool(home, "reventlog bmc0");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  EXPECT_EQ(r.out.rfind("bmc0: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(Sensor 0x40)\nbmc0: "), std::string::npos) << r.out;
  r = run_tool(home, "reventlog bmc0 2 -s");
  EXPECT_EQ(r.rc, 0) << r.out;
  auto newest = r.out.find("(Sensor 0x42)");
  auto next = r.out.find("(Sensor 0x41)");
  EXPECT_NE(newest, std::string::npos) << r.out;
  EXPECT_LT(newest, next) << r.out;
  EXPECT_EQ(r.out.find("(Sensor 0x40)"), std::string::npos) << r.out;
  r = run_tool(home, "reventlog bmc0 all 5");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("reventlog all 5 invalid"), std::string::npos) << r.out;
  r = run_tool(home, "reventlog bmc0 clear");
  EXPECT_EQ(r.out, "bmc0: SEL cleared\n");
  r = run_tool(home, "reventlog bmc0");
  EXPECT_EQ(r.out, "bmc0: no SEL entries\n");
  r = run_tool(home, "rbeacon bmc1 blink");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "bmc1: blink\n");
  EXPECT_NE(farm_->log(1).find("set identify 255 0\n"), std::string::npos);
  r = run_tool(home, "rbeacon bmc1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Usage: rbeacon"), std::string::npos) << r.out;
  r = run_tool(home, "rbeacon bmc1,vm0 off");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("bmc1: off\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vm0: Error: Unable to identify plugin"), std::string::npos) << r.out;
}

TEST_F(eventlog_test, policy_names_reventlog_and_rbeacon) {
  auto home = d_->home();
  run_tool(home, "echo opw | clusterctl passwd operator2 --password-stdin");
  run_tool(home, "mkdef -t policy -o 7 name=operator2 rule=allow commands=reventlog");
  cws::test::https_client client{d_->ca(), d_->port()};
  auto r = client.request("GET", "/clusterws/nodes/bmc1/eventlog?userName=operator2&userPW=opw");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = client.request("PUT", "/clusterws/nodes/bmc1/beacon?userName=operator2&userPW=opw",
                     R"({"action":"on"})");
  EXPECT_EQ(r.status, 401u) << r.body;
  run_tool(home, "chdef -t policy -o 7 commands=rbeacon");
  r = client.request("PUT", "/clusterws/nodes/bmc1/beacon?userName=operator2&userPW=opw",
                     R"({"action":"on"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = client.request("DELETE", "/clusterws/nodes/bmc1/eventlog?userName=operator2&userPW=opw");
  EXPECT_EQ(r.status, 401u) << r.body;
  run_tool(home, "rmdef -t policy -o 7");
}

} // namespace
