// rinstall and PUT /nodes/{nr}/provision against a farm of ipmi_sim BMCs and libvirt's test
// driver: nodeset, rsetboot net, rpower boot per node; a node nodeset refuses keeps its BMC
// untouched, a dead BMC fails its node alone, a kvm node is powered without rsetboot.

#include <gtest/gtest.h>

#include <fstream>

#include "../support/farm_suite.hpp"

namespace {

using cws::test::run_tool;

const std::string image = "debian12-x86_64-install-compute";

class rinstall_test : public cws::test::farm_suite<rinstall_test> {
 protected:
  static void SetUpTestSuite() {
    if (!cws::test::have_ipmi_sim()) {
      return;
    }
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 4);
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=1");
    auto r = run_tool(home, "mkdef -t osimage -o " + image
                              + " imagetype=linux provmethod=install osname=Linux "
                                "osvers=debian12 osarch=x86_64 profile=compute");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(home, "mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret");
    ASSERT_EQ(r.rc, 0) << r.out;
    // cn0..cn1 install the image; noimg has none; dead's BMC does not answer
    for (const char* n : {"cn0", "cn1", "noimg", "dead"}) {
      size_t i = std::string{n} == "cn0" ? 0 : std::string{n} == "cn1" ? 1 : n[0] == 'n' ? 2 : 3;
      std::string line = std::string{"mkdef "} + n + " groups=bmcs,all arch=x86_64 bmc=127.0.0.1"
                         + " bmcport=" + std::to_string(farm_->port(i));
      if (std::string{n} != "noimg") {
        line += " provmethod=" + image;
      }
      r = run_tool(home, line);
      ASSERT_EQ(r.rc, 0) << r.out;
    }
    farm_->stop(3);
    {
      std::ofstream xml{dir_->path / "vms.xml"};
      xml << "<node><domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>"
             "<name>vm0</name><memory>65536</memory><os><type>hvm</type></os>"
             "<test:runstate>5</test:runstate></domain></node>\n";
    }
    r = run_tool(home, "mkdef vm0 groups=all mgt=kvm provmethod=" + image + " vmhost=test://"
                         + (dir_->path / "vms.xml").string());
    ASSERT_EQ(r.rc, 0) << r.out;
    run_tool(home, "mkdef other groups=all mgt=openbmc provmethod=" + image);
    d_->start();
  }
};

TEST_F(rinstall_test, provision_sets_the_boot_state_then_net_boot_then_power_per_node) {
  farm_->set_power(0, false);
  farm_->set_power(1, true);
  farm_->set_power(2, false);
  auto r = call("PUT", "/nodes/cn0,cn1,noimg,dead,vm0,other/provision", "{}", "&format=detail");
  EXPECT_EQ(r.status, 200u) << r.body;
  // cn0 was off: on; cn1 was on: reset; both boot from the network next
  EXPECT_NE(r.body.find(R"("cn0":{"rc":0,"provision":"nodeset: install debian12-x86_64-compute\n)"
                        R"(rsetboot: Network\nrpower: on\n"})"),
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find(R"("cn1":{"rc":0,"provision":"nodeset: install debian12-x86_64-compute\n)"
                        R"(rsetboot: Network\nrpower: reset\n"})"),
            std::string::npos)
    << r.body;
  EXPECT_EQ(farm_->boot(0), "pxe");
  EXPECT_EQ(farm_->power(0), "1");
  EXPECT_EQ(farm_->boot(1), "pxe");
  // noimg: nodeset refused it, so its BMC was never asked anything
  EXPECT_NE(r.body.find(R"("noimg":{"rc":-1,"error":"boot-state")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("noimg: OS image name must be specified."), std::string::npos) << r.body;
  EXPECT_EQ(farm_->log(2).find("set"), std::string::npos) << farm_->log(2);
  EXPECT_EQ(farm_->power(2), "0");
  // dead: its own error at rsetboot, the others went on
  auto dead = r.body.substr(r.body.find(R"("dead":)"));
  dead = dead.substr(0, dead.find('}'));
  EXPECT_NE(dead.find(R"("error":"timeout","message":"rsetboot: )"), std::string::npos) << dead;
  // vm0 (mgt=kvm): nodeset, then powered on, no rsetboot (as rinstall.pm)
  EXPECT_NE(r.body.find(R"("vm0":{"rc":0,"provision":"nodeset: install debian12-x86_64-compute\n)"
                        R"(rpower: off on\n"})"), // (the kvm driver says what it did)
            std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find(R"("other":{"rc":-1,"error":"unsupported")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("rinstall only support nodehm.mgt type"), std::string::npos) << r.body;
  // the boot state is in the store (through the writer: the daemon's own view)
  auto b = call("GET", "/nodes/cn0,noimg/bootstate");
  EXPECT_EQ(b.body, R"({"cn0":{"bootstate":"install debian12-x86_64-compute"},)"
                    R"("noimg":{"bootstate":"offline"}})"
                    "\n");
  // without format=detail a failed node makes it xCAT's 403 with the errors
  r = call("PUT", "/nodes/noimg/provision", R"({"osimage":"nosuch"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("Cannot find the OS image nosuch in the osimage table."), std::string::npos)
    << r.body;
  r = call("PUT", "/nodes/cn0/provision", R"({"action":"offline"})");
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(r.body.find("Invalid option offline"), std::string::npos) << r.body;
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("/provision"), std::string::npos) << audit;
}

TEST_F(rinstall_test, cli_prints_xcat_lines_and_uefi_sets_the_efi_boot) {
  auto home = d_->home();
  farm_->set_power(1, false);
  auto r = run_tool(home, "rinstall cn1 osimage=" + image + " -u -V");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "Provision node(s): cn1\n"
                   "cn1: nodeset: install debian12-x86_64-compute\n"
                   "cn1: rsetboot: Network\n"
                   "cn1: rpower: on\n");
  EXPECT_EQ(farm_->boot(1), "pxe");
  EXPECT_EQ(farm_->power(1), "1");
  // a node without an osimage stops at nodeset; its BMC is left alone
  r = run_tool(home, "rinstall noimg,cn0");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Provision node(s): cn0 noimg\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Error: noimg: OS image name must be specified.\n"), std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("Error: Failed to run 'nodeset' against the following nodes: noimg\n"),
            std::string::npos)
    << r.out;
  EXPECT_EQ(farm_->log(2).find("set"), std::string::npos) << farm_->log(2);
  r = run_tool(home, "rinstall dead");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Error: Failed to run 'rsetboot' against the following nodes: dead\n"),
            std::string::npos)
    << r.out;
  r = run_tool(home, "rinstall cn0 osimage=nosuch");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Error: Cannot find the OS image nosuch in the osimage table."),
            std::string::npos)
    << r.out;
  r = run_tool(home, "rinstall cn0 bogus");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Error: Invalid option bogus"), std::string::npos) << r.out;
  r = run_tool(home, "rinstall");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("rinstall <noderange> [osimage[=<imagename>]]"), std::string::npos);
}

} // namespace
