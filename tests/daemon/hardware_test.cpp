// rpower and rsetboot over REST and the CLI against a farm of ipmi_sim BMCs on 127.0.0.1:
// xCAT's shapes (actionout, 403 with every failed node, 404 "Missed Action."), format=detail,
// mixed ranges (ipmi, an unknown mgt, a node without bmc, a wrong password, a dead BMC),
// credentials from the passwd table's ipmi row, and policy by command.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "../support/farm_suite.hpp"
#include "../support/metrics_sample.hpp"

namespace {

using cws::test::run_tool;

class hardware_test : public cws::test::farm_suite<hardware_test> {
 protected:
  static void SetUpTestSuite() {
    if (!cws::test::have_ipmi_sim()) {
      return;
    }
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 4);
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=2");
    run_tool(home, "mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret");
    for (size_t i = 0; i < 3; ++i) {
      auto r = run_tool(home, "mkdef bmc" + std::to_string(i)
                                + " groups=bmcs,all bmc=127.0.0.1 "
                                  "bmcport="
                                + std::to_string(farm_->port(i)));
      ASSERT_EQ(r.rc, 0) << r.out;
    }
    // BMC 3 is stopped: an address where nothing answers
    run_tool(home, "mkdef deadbmc groups=bmcs,all bmc=127.0.0.1 bmcport="
                     + std::to_string(farm_->port(3)));
    farm_->stop(3);
    run_tool(home, "mkdef wrongpw groups=all mgt=ipmi bmc=127.0.0.1 bmcusername=admin "
                   "bmcpassword=nope bmcport="
                     + std::to_string(farm_->port(0)));
    run_tool(home, "mkdef vm1 groups=all mgt=kvm"); // no vmhost
    run_tool(home, "mkdef obmc groups=all mgt=openbmc");
    // virtual machines on libvirt's test driver: the daemon's connection keeps their state
    {
      std::ofstream xml{dir_->path / "vms.xml"};
      xml << "<node>\n";
      for (const char* name : {"vmon", "vmoff"}) {
        xml << "<domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>"
            << "<name>" << name << "</name><memory>65536</memory><os><type>hvm</type></os>"
            << (std::string{name} == "vmoff" ? "<test:runstate>5</test:runstate>" : "")
            << "</domain>\n";
      }
      xml << "</node>\n";
    }
    run_tool(home, "mkdef vmon,vmoff,vmgone groups=vms,all mgt=kvm vmhost=test://"
                     + (dir_->path / "vms.xml").string());
    run_tool(home, "mkdef nobmc groups=all mgt=ipmi");
    d_->start();
  }
};

TEST_F(hardware_test, power_get_and_put_in_xcat_shapes) {
  farm_->set_power(1, true);
  auto r = call("GET", "/nodes/bmc0,bmc1/power");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"bmc0":{"power":"off"},"bmc1":{"power":"on"}})"
                    "\n");
  r = call("PUT", "/nodes/bmc0/power", R"({"action":"on"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(farm_->power(0), "1");
  EXPECT_NE(farm_->log(0).find("set power 1"), std::string::npos);
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("\"command\":\"on\""), std::string::npos) << audit;
  EXPECT_EQ(audit.find("secret"), std::string::npos); // the action, never the BMC password
  r = call("PUT", "/nodes/bmc0,bmc1/power", R"({"action":"off"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(farm_->power(0), "0");
  EXPECT_EQ(farm_->power(1), "0");
  // without an action: xCAT's CGI answer; nothing is sent to any BMC
  auto before = farm_->log(0);
  r = call("PUT", "/nodes/bmc0/power", R"({})");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("Missed Action."), std::string::npos) << r.body;
  r = call("PUT", "/nodes/bmc0/power", R"({"action":"explode"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("Unsupported command: rpower explode"), std::string::npos) << r.body;
  EXPECT_EQ(farm_->log(0), before);
  // xcoll merges equal answers
  r = call("GET", "/nodes/bmc0,bmc1/power", {}, "&xcoll=1");
  EXPECT_EQ(r.body, R"({"bmc0,bmc1":{"power":"off"}})"
                    "\n");
}

TEST_F(hardware_test, kvm_nodes_power_through_libvirt_beside_bmcs_in_one_request) {
  auto r = call("GET", "/nodes/vmon,vmoff/power");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"vmoff":{"power":"off"},"vmon":{"power":"on"}})"
                    "\n");
  r = call("PUT", "/nodes/vmoff/power", R"({"action":"on"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = call("PUT", "/nodes/vmon/power", R"({"action":"off"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = call("GET", "/nodes/vmon,vmoff/power"); // changed in the hypervisor, and it stays
  EXPECT_EQ(r.body, R"({"vmoff":{"power":"on"},"vmon":{"power":"off"}})"
                    "\n")
    << r.body;
  // one request over a BMC, two virtual machines, a missing domain and a node without mgt
  run_tool(d_->home(), "mkdef nomgt groups=all");
  r = call("PUT", "/nodes/bmc2,vmon,vmoff,vmgone,nomgt/power", R"({"action":"boot"})",
           "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("vmon":{"rc":0,"power":"off on"})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("vmoff":{"rc":0,"power":"on reset"})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("vmgone":{"rc":-1,"error":"not-found")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("nomgt":{"rc":1,"error":"unsupported")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("bmc2":{"rc":0,"power":)"), std::string::npos) << r.body;
  // rsetboot has no kvm driver, as in xCAT
  r = call("PUT", "/nodes/vmon/nextboot", R"({"order":"net"})", "&format=detail");
  EXPECT_NE(r.body.find("Unable to identify plugin"), std::string::npos) << r.body;
  // the CLI: a process of its own, so a fresh test-driver connection (the file's states)
  auto cli = run_tool(d_->home(), "rpower vmon,vmoff stat");
  // one line per node as it finishes (any order, as xCAT's)
  EXPECT_EQ(cli.out.size(), std::string{"vmoff: off\nvmon: on\n"}.size()) << cli.out;
  EXPECT_NE(cli.out.find("vmoff: off\n"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("vmon: on\n"), std::string::npos) << cli.out;
  run_tool(d_->home(), "rmdef nomgt");
}

TEST_F(hardware_test, the_ipmi_and_libvirt_engines_count_runs_results_and_pools) {
  auto metrics = [] {
    return call("GET", "/metrics").body;
  };
  auto before = metrics();
  auto r = call("GET", "/nodes/bmc0,deadbmc,wrongpw,vmon,vmgone/power", {}, "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto after = metrics();
  using cws::test::metric_growth;
  using cws::test::metric_sample;
  EXPECT_EQ(metric_growth(before, after, "clusterws_ipmi_runs_total"), 1) << after;
  EXPECT_EQ(metric_growth(before, after, "clusterws_ipmi_nodes_total{result=\"ok\"}"), 1);
  EXPECT_EQ(metric_growth(before, after, "clusterws_ipmi_nodes_total{result=\"timeout\"}"), 1);
  EXPECT_EQ(metric_growth(before, after, "clusterws_ipmi_nodes_total{result=\"auth\"}"), 1);
  EXPECT_EQ(metric_sample(after, "clusterws_ipmi_nodes_in_flight"), 0);
  EXPECT_GE(metric_sample(after, "clusterws_ipmi_sessions_total"), 1);
  EXPECT_GE(metric_sample(after, "clusterws_ipmi_pool_sessions"), 1); // bmc0's, kept
  EXPECT_EQ(metric_growth(before, after, "clusterws_libvirt_runs_total"), 1) << after;
  EXPECT_EQ(metric_growth(before, after, "clusterws_libvirt_nodes_total{result=\"ok\"}"), 1);
  EXPECT_EQ(metric_growth(before, after, "clusterws_libvirt_nodes_total{result=\"not-found\"}"), 1);
  EXPECT_EQ(metric_sample(after, "clusterws_libvirt_nodes_in_flight"), 0);
  EXPECT_GE(metric_sample(after, "clusterws_libvirt_connections"), 1);
  // a run ends (on_done) after its last result: at the latest just after the answer
  for (int i = 0; i < 50
                  && (metric_sample(after, "clusterws_ipmi_runs_in_flight") != 0
                      || metric_sample(after, "clusterws_libvirt_runs_in_flight") != 0);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = metrics();
  }
  EXPECT_EQ(metric_sample(after, "clusterws_ipmi_runs_in_flight"), 0);
  EXPECT_EQ(metric_sample(after, "clusterws_libvirt_runs_in_flight"), 0);
}

TEST_F(hardware_test, nextboot_sets_and_reads_the_boot_device) {
  auto r = call("PUT", "/nodes/bmc2/nextboot", R"({"order":"net"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(farm_->boot(2), "pxe");
  r = call("GET", "/nodes/bmc2/nextboot");
  EXPECT_EQ(r.body, R"({"bmc2":{"nextboot":"Network"}})"
                    "\n");
  r = call("PUT", "/nodes/bmc2/nextboot", R"({"action":"net"})");
  EXPECT_EQ(r.status, 404u) << r.body; // rsetboot's key is `order`
}

TEST_F(hardware_test, mixed_range_fails_per_node_without_hiding_the_others_in_detail) {
  auto r = call("GET", "/nodes/bmc0,vm1,obmc,nobmc,wrongpw,deadbmc/power");
  // xCAT's default: any failed node makes it 403 with every node's error
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("obmc: Unable to identify plugin for this command, check relevant "
                        "tables: nodehm.power,mgt"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("vm1: Unable to identify vmhost for vm1 (set its vmhost attribute)"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("nobmc: Unable to identify bmc for nobmc"), std::string::npos);
  EXPECT_NE(r.body.find("wrongpw: Incorrect password provided"), std::string::npos);
  EXPECT_NE(r.body.find("deadbmc: timeout"), std::string::npos);
  EXPECT_EQ(r.body.find("bmc0"), std::string::npos); // the successes are dropped, as xCAT does
  r = call("GET", "/nodes/bmc0,vm1,wrongpw,deadbmc/power", {}, "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("bmc0":{"rc":0,"power":"off"})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("deadbmc":{"rc":1,"error":"timeout")"), std::string::npos);
  EXPECT_NE(r.body.find(R"("wrongpw":{"rc":1,"error":"auth")"), std::string::npos);
  EXPECT_NE(r.body.find(R"("vm1":{"rc":1,"error":"no-vmhost")"), std::string::npos);
}

TEST_F(hardware_test, stream_sends_each_node_as_it_finishes) {
  farm_->set_power(0, false);
  auto r = call("GET", "/nodes/bmc0,vm1/power", {}, "&stream=1");
  EXPECT_EQ(r.status, 201u) << r.body; // as nodeshell's stream
  EXPECT_NE(r.body.find(R"({"node":"bmc0","rc":0,"power":"off"})"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"({"node":"vm1","rc":1,"error":"no-vmhost")"), std::string::npos);
  EXPECT_NE(r.body.find(R"("done":"true","nodes":2,"failed":1)"), std::string::npos) << r.body;
}

TEST_F(hardware_test, passwd_ipmi_row_supplies_credentials_and_is_no_api_login) {
  auto home = d_->home();
  run_tool(home, "mkdef nocreds groups=all mgt=ipmi bmc=127.0.0.1 bmcport="
                   + std::to_string(farm_->port(2)));
  // xCAT's defaults (USERID/PASSW0RD) do not open this BMC
  auto r = call("GET", "/nodes/nocreds/power");
  EXPECT_EQ(r.status, 403u) << r.body;
  auto t = run_tool(home, "chtab key=ipmi passwd.username=admin passwd.password=secret");
  ASSERT_EQ(t.rc, 0) << t.out;
  r = call("GET", "/nodes/nocreds/power");
  EXPECT_EQ(r.status, 200u) << r.body;
  // the row is never an API user, under any name
  cws::test::https_client client{d_->ca(), d_->port()};
  for (const char* user : {"admin", "ipmi"}) {
    auto login
      = client.request("GET", std::string{"/clusterws/nodes?userName="} + user + "&userPW=secret");
    EXPECT_EQ(login.status, 401u) << user;
  }
  // tabdump shows the row with its password hidden from the REST tables API
  t = run_tool(home, "tabdump passwd");
  EXPECT_NE(t.out.find("\"ipmi\",\"admin\""), std::string::npos) << t.out;
  run_tool(home, "rmdef nocreds");
}

TEST_F(hardware_test, cli_rpower_and_rsetboot_print_xcat_lines) {
  auto home = d_->home();
  farm_->set_power(2, false);
  auto r = run_tool(home, "rpower bmc2 on");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "bmc2: on\n");
  r = run_tool(home, "rpower bmc2 stat");
  EXPECT_EQ(r.out, "bmc2: on\n");
  r = run_tool(home, "rpower bmc2 boot");
  EXPECT_EQ(r.out, "bmc2: reset\n");
  r = run_tool(home, "rsetboot bmc2 cd");
  EXPECT_EQ(r.out, "bmc2: CD/DVD\n");
  EXPECT_EQ(farm_->boot(2), "cdrom");
  r = run_tool(home, "rpower bmc2,vm1 stat");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("bmc2: on\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vm1: Error: Unable to identify vmhost for vm1"), std::string::npos)
    << r.out;
  r = run_tool(home, "rpower bmc2");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Please enter an action"), std::string::npos);
  r = run_tool(home, "rpower nosuchnode stat");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Invalid nodes and/or groups in noderange: nosuchnode"), std::string::npos)
    << r.out;
}

TEST_F(hardware_test, staged_power_on_follows_syspowerinterval) {
  auto home = d_->home();
  run_tool(home, "chdef -t site clustersite syspowerinterval=1");
  auto r = run_tool(home, "rpower bmc0,bmc1 on");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("IPMI plugin requires syspowermaxnodes be defined if syspowerinterval "
                       "is defined"),
            std::string::npos)
    << r.out;
  run_tool(home, "chdef -t site clustersite syspowermaxnodes=1");
  farm_->set_power(0, false);
  farm_->set_power(1, false);
  auto t0 = std::chrono::steady_clock::now();
  r = run_tool(home, "rpower bmc0,bmc1 on");
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_GE(took, std::chrono::seconds(1)); // the second BMC one interval after the first
  EXPECT_EQ(farm_->power(1), "1");
  t0 = std::chrono::steady_clock::now();
  r = run_tool(home, "rpower bmc0,bmc1 stat"); // only on, reset and boot are staged
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  run_tool(home, "chdef -t site clustersite syspowerinterval=0 syspowermaxnodes=");
}

TEST_F(hardware_test, policy_names_rpower_and_rsetboot) {
  auto home = d_->home();
  run_tool(home, "echo opw | clusterctl passwd operator1 --password-stdin");
  run_tool(home, "mkdef -t policy -o 6 name=operator1 rule=allow commands=rpower");
  cws::test::https_client client{d_->ca(), d_->port()};
  auto r = client.request("GET", "/clusterws/nodes/bmc0/power?userName=operator1&userPW=opw");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = client.request("GET", "/clusterws/nodes/bmc0/nextboot?userName=operator1&userPW=opw");
  EXPECT_EQ(r.status, 401u) << r.body;
  // a reader other than root never sees a BMC password: definitions, pages, /tables
  run_tool(home, "mkdef -t policy -o 6.1 name=operator1 rule=allow commands=lsdef");
  run_tool(home, "mkdef -t policy -o 6.2 name=operator1 rule=allow commands=getTablesNodesAttribs");
  r = client.request("GET", "/clusterws/nodes/bmc0?userName=operator1&userPW=opw");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("bmcpassword":"********")"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("secret"), std::string::npos) << r.body;
  r = client.request("GET", "/clusterws/tables/ipmi/nodes/bmc0?userName=operator1&userPW=opw");
  EXPECT_EQ(r.body.find("secret"), std::string::npos) << r.body;
  r = call("GET", "/nodes/bmc0");
  EXPECT_NE(r.body.find(R"("bmcpassword":"secret")"), std::string::npos) << r.body;
  run_tool(home, "rmdef -t policy -o 6.1,6.2");
  run_tool(home, "rmdef -t policy -o 6");
}

} // namespace
