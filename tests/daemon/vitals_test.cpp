// rvitals and rinv over REST and the CLI on a real daemon, against ipmi_sim BMCs holding SDRs,
// sensor readings and FRU data, and virtual machines on libvirt's test driver: xCAT's
// actionout (key-value pairs, the Message array), keywords in the path, format=detail,
// stream=1, a mixed range, and policy by command (rvitals, rinv).

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include "../support/bmc_content.hpp"
#include "../support/farm_suite.hpp"

namespace {

using cws::test::run_tool;

class vitals_test : public cws::test::farm_suite<vitals_test> {
 protected:
  static void SetUpTestSuite() {
    if (!cws::test::have_ipmi_sim() || ::access("/usr/bin/sdrcomp", X_OK) != 0) {
      return;
    }
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 2);
    farm_->set_hardware(0, cws::test::sample_hardware());
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=1");
    run_tool(home, "mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret");
    run_tool(home, "mkdef sensed groups=bmcs,all bmc=127.0.0.1 bmcport="
                     + std::to_string(farm_->port(0)));
    run_tool(home,
             "mkdef bare groups=bmcs,all bmc=127.0.0.1 bmcport=" + std::to_string(farm_->port(1)));
    {
      std::ofstream xml{dir_->path / "vms.xml"};
      xml << "<node><domain type='test'><name>vm1</name>"
          << "<uuid>4dea22b3-1d52-d8f3-2516-782e98ab3fa0</uuid><memory>1048576</memory>"
          << "<currentMemory>524288</currentMemory><vcpu>2</vcpu><os><type>hvm</type></os>"
          << "<devices><disk type='file' device='disk'><source file='/var/lib/vm1.img'/>"
          << "<target dev='vda' bus='virtio'/></disk>"
          << "<interface type='network'><mac address='52:54:00:aa:bb:cc'/>"
          << "<source network='default'/></interface></devices></domain></node>\n";
    }
    run_tool(home,
             "mkdef vm1 groups=all mgt=kvm vmhost=test://" + (dir_->path / "vms.xml").string());
    run_tool(home, "mkdef nomgt groups=all");
    d_->start();
  }

  static cws::test::reply call(const std::string& path, const std::string& extra = {}) {
    return farm_suite::call("GET", path, {}, extra);
  }
};

TEST_F(vitals_test, vitals_are_key_value_pairs_with_the_values_set) {
  auto r = call("/nodes/sensed/vitals/temp;voltage");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"j({"sensed":{"12V":"12.06 Volts","CPU Temp":"45 C (113 F)"}})j"
                    "\n");
  r = call("/nodes/sensed/vitals");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"("Power Status":"off")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("Fan 1":"3000 RPM")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"j("PSU Power":"200 Watts (683 BTUs/hr)")j"), std::string::npos);
  // a line without a description goes to Message, as xCAT's actionout does
  EXPECT_NE(r.body.find(R"("Message":["LED status not supported on this system"])"),
            std::string::npos)
    << r.body;
  r = call("/nodes/sensed/vitals/explode");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("Unrecognized rvitals arguments explode"), std::string::npos) << r.body;
  // reads are not audited (the audit log records changes)
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_EQ(audit.find("vitals"), std::string::npos) << audit;
}

TEST_F(vitals_test, inventory_of_a_bmc_and_a_virtual_machine) {
  auto r = call("/nodes/sensed/inventory/serial;guid");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"sensed":{"System Serial Number":"SYS-SER",)"
                    R"("Chassis Serial Number":"CHSER42",)"
                    R"("UUID/GUID":"A1234567-89AB-CDEF-A123-456789ABCDEF"}})"
                    "\n");
  r = call("/nodes/vm1/inventory");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body, R"({"vm1":{"UUID/GUID":"4dea22b3-1d52-d8f3-2516-782e98ab3fa0","CPUs":"2",)"
                    R"j("Memory":"512 MB","Hard disk 1 (vda)":"/var/lib/vm1.img",)j"
                    R"("Network adapter 1":"52:54:00:aa:bb:cc"}})"
                    "\n");
  r = call("/nodes/sensed/inventory/bogus");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("unsupported BMC inv argument bogus"), std::string::npos) << r.body;
}

TEST_F(vitals_test, mixed_range_in_detail_and_streamed) {
  // a BMC with sensors, one without, a virtual machine (no rvitals in xCAT's kvm plugin) and
  // a node without mgt, in one request
  auto r = call("/nodes/sensed,bare,vm1,nomgt/vitals/temp", "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_NE(r.body.find(R"j("sensed":{"rc":0,"CPU Temp":"45 C (113 F)"})j"), std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find(R"("bare":{"rc":0,"Message":["SDR repository is empty"]})"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find(R"("vm1":{"rc":1,"error":"unsupported")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("nomgt":{"rc":1,"error":"unsupported")"), std::string::npos);
  // xCAT's default: a failed node makes it 403 with the errors
  r = call("/nodes/sensed,nomgt/vitals/temp");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("nomgt: Unable to identify plugin for this command, check relevant "
                        "tables: nodehm.mgt"),
            std::string::npos)
    << r.body;
  r = call("/nodes/sensed,vm1/inventory/guid", "&stream=1");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_NE(r.body.find(R"({"node":"sensed","rc":0,"inventory":{"UUID/GUID":"A1234567-)"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find(R"({"node":"vm1","rc":0,"inventory":{"UUID/GUID":"4dea22b3-)"),
            std::string::npos)
    << r.body;
}

TEST_F(vitals_test, cli_prints_one_line_per_reading) {
  auto home = d_->home();
  auto r = run_tool(home, "rvitals sensed temp fanspeed");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "sensed: CPU Temp: 45 C (113 F)\nsensed: Fan 1: 3000 RPM\n");
  r = run_tool(home, "rinv sensed model");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "sensed: System Description: Prod Name\nsensed: System Model/MTM: MODEL-1\n"
                   "sensed: Chassis Part Number: CH-PART\n");
  r = run_tool(home, "rinv vm1");
  EXPECT_NE(r.out.find("vm1: CPUs: 2\n"), std::string::npos) << r.out;
  r = run_tool(home, "rvitals sensed bogus");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Unrecognized rvitals arguments bogus"), std::string::npos) << r.out;
}

TEST_F(vitals_test, policy_names_rvitals_and_rinv) {
  auto home = d_->home();
  run_tool(home, "echo opw | clusterctl passwd watcher --password-stdin");
  run_tool(home, "mkdef -t policy -o 7 name=watcher rule=allow commands=rvitals");
  cws::test::https_client client{d_->ca(), d_->port()};
  auto r = client.request("GET", "/clusterws/nodes/sensed/vitals/temp?userName=watcher&userPW=opw");
  EXPECT_EQ(r.status, 200u) << r.body;
  r = client.request("GET", "/clusterws/nodes/sensed/inventory?userName=watcher&userPW=opw");
  EXPECT_EQ(r.status, 401u) << r.body;
  r = client.request("GET", "/clusterws/nodes/sensed/power?userName=watcher&userPW=opw");
  EXPECT_EQ(r.status, 401u) << r.body;
}

} // namespace
