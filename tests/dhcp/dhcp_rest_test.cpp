// makedhcp over REST against a real clusterwsd: POST/DELETE /nodes/{nr}/dhcp and POST
// /services/dhcp (xCAT's xcatws shapes), dryrun=1, policy command makedhcp, the audit log.

#include <gtest/gtest.h>

#include <fstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;
using cws::test::slurp;

TEST(dhcp_rest, post_delete_and_services_run_makedhcp_with_xcats_answers) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  auto home = d.home();
  auto conf_dir = dir.path / "dnsmasq.d";
  {
    std::ofstream conf{home / "clusterws.conf", std::ios::app};
    conf << "dnsmasq_conf_dir = " << conf_dir.string() << "\n"
         << "dhcp_reload_command = echo reload >> " << (dir.path / "reloads").string() << "\n"
         << "dhcp_restart_command = echo restart >> " << (dir.path / "reloads").string() << "\n";
  }
  ASSERT_EQ(run_tool(home, "chdef -t site domain=cluster.test master=10.99.0.1").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef -t network -o prov net=10.99.0.0 mask=255.255.255.0 "
                           "mgtifname=srv0 dynamicrange=10.99.0.100-10.99.0.149")
              .rc,
            0);
  ASSERT_EQ(run_tool(home, "mkdef node01 groups=all mac=52:54:00:99:00:11 ip=10.99.0.11").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef node02 groups=all mac=52:54:00:99:00:12 ip=10.99.0.12").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef node03 groups=all ip=10.99.0.13").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef node04 groups=all mac=zz ip=10.99.0.14").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef -t policy -o 6 name=alice rule=allow commands=lsdef").rc, 0);
  ASSERT_EQ(run_tool(home, "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
  d.start();
  cws::test::https_client c{d.ca(), d.port()};

  // dryrun=1: the diff as lines, nothing written
  auto r = c.request("POST", d.url("/services/dhcp", "&dryrun=1"));
  ASSERT_EQ(r.status, 200) << r.body << slurp(d.log());
  EXPECT_NE(r.body.find("+++ " + (conf_dir / "clusterws-dhcp.conf").string()), std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("would run: echo restart"), std::string::npos) << r.body;
  EXPECT_FALSE(std::filesystem::exists(conf_dir / "clusterws-dhcp.conf"));
  // makedhcp -n: 201, empty
  r = c.request("POST", d.url("/services/dhcp"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, "");
  EXPECT_NE(slurp(conf_dir / "clusterws-dhcp.conf").find("dhcp-range=set:cws-net0"),
            std::string::npos);
  // dryrun=1 of node01,node02,node03: the lines of the hosts file and node03's warning
  r = c.request("POST", d.url("/nodes/node01,node02,node03/dhcp", "&dryrun=1"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("+52:54:00:99:00:11,10.99.0.11,node01"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("Warning: Unable to find mac address for node03"), std::string::npos)
    << r.body;
  // makedhcp node01,node02,node03: 201, empty (xCAT's answer; warnings are the tool's)
  r = c.request("POST", d.url("/nodes/node01,node02,node03/dhcp"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, "");
  auto hosts = conf_dir / "clusterws-dhcp" / "hosts";
  EXPECT_NE(slurp(hosts).find("52:54:00:99:00:12,10.99.0.12,node02"), std::string::npos);
  EXPECT_EQ(slurp(dir.path / "reloads"), "restart\nreload\n");
  // a bad MAC: xCAT's error, 403
  r = c.request("POST", d.url("/nodes/node04/dhcp"));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("Invalid mac address zz for node04"), std::string::npos) << r.body;
  // makedhcp -d node02: 200, empty
  r = c.request("DELETE", d.url("/nodes/node02/dhcp"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(slurp(hosts).find("node02"), std::string::npos);
  EXPECT_NE(slurp(hosts).find("node01"), std::string::npos);
  // a node that does not exist: nothing done
  r = c.request("POST", d.url("/nodes/nosuch/dhcp"));
  EXPECT_EQ(r.status, 403) << r.body;
  // policy: makedhcp is its own command
  r = c.request("POST", "/clusterws/nodes/node01/dhcp?userName=alice&userPW=alicepw");
  EXPECT_EQ(r.status, 401) << r.body;
  // audited as changes
  auto audit = slurp(home / "audit.log");
  EXPECT_NE(audit.find("\"method\":\"DELETE\",\"path\":\"/clusterws/nodes/node02/dhcp\","
                       "\"noderange\":\"node02\",\"command\":\"-d\",\"status\":200"),
            std::string::npos)
    << audit;
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
