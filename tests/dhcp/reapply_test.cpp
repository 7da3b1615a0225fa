// provision_reapply = on against a real clusterwsd: a chdef of a node's address (by the tool,
// another process) updates the hosts file and dnsmasq's reservations without a command; a
// burst of changes is one re-apply; a change of another attribute re-applies nothing.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;
using cws::test::slurp;

/// Waits up to 15 s for `pred`.
template<class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 300; ++i) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(reapply, a_changed_address_rewrites_hosts_and_dhcp_without_a_command_once_per_burst) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  auto home = d.home();
  auto conf_dir = dir.path / "dnsmasq.d";
  auto hosts = dir.path / "hosts";
  std::ofstream{hosts} << "127.0.0.1 localhost\n";
  {
    std::ofstream conf{home / "clusterws.conf", std::ios::app};
    conf << "provision_reapply = on\n"
         << "provision_reapply_delay_ms = 1500\n"
         << "events_poll_ms = 50\n"
         << "hosts_file = " << hosts.string() << "\n"
         << "dnsmasq_conf_dir = " << conf_dir.string() << "\n"
         << "dhcp_reload_command = echo reload >> " << (dir.path / "reloads").string() << "\n"
         << "dhcp_restart_command = echo restart >> " << (dir.path / "reloads").string() << "\n";
  }
  ASSERT_EQ(run_tool(home, "chdef -t site domain=cluster.test master=10.99.0.1").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef -t network -o prov net=10.99.0.0 mask=255.255.255.0 "
                           "mgtifname=srv0 dynamicrange=10.99.0.100-10.99.0.149")
              .rc,
            0);
  for (int i = 1; i <= 3; ++i) {
    auto n = std::to_string(i);
    ASSERT_EQ(run_tool(home, "mkdef node0" + n + " groups=all mac=52:54:00:99:00:1" + n
                               + " ip=10.99.0.1" + n)
                .rc,
              0);
  }
  d.start();
  cws::test::https_client c{d.ca(), d.port()};
  ASSERT_EQ(c.request("POST", d.url("/services/dhcp")).status, 201);
  auto reservations = conf_dir / "clusterws-dhcp" / "hosts";

  // one address changes: hosts file and dnsmasq's reservation follow, no command run
  ASSERT_EQ(run_tool(home, "chdef node01 ip=10.99.0.21").rc, 0);
  EXPECT_TRUE(eventually([&] {
    return slurp(hosts).find("10.99.0.21 node01 node01.cluster.test") != std::string::npos;
  }))
    << slurp(hosts) << slurp(d.log());
  EXPECT_TRUE(eventually([&] {
    return slurp(reservations).find("52:54:00:99:00:11,10.99.0.21,node01") != std::string::npos;
  }))
    << slurp(reservations) << slurp(d.log());
  EXPECT_TRUE(eventually(
    [&] { return count(slurp(d.log()), "provision re-apply: makedhcp for 1 node(s)") == 1; }))
    << slurp(d.log());

  // a burst (three tools, three commits within the delay): one re-apply of the three nodes
  ASSERT_EQ(run_tool(home, "chdef node01 ip=10.99.0.31").rc, 0);
  ASSERT_EQ(run_tool(home, "chdef node02 mac=52:54:00:99:00:32").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef node04 groups=all mac=52:54:00:99:00:34 ip=10.99.0.34").rc, 0);
  EXPECT_TRUE(eventually(
    [&] { return count(slurp(d.log()), "provision re-apply: makehosts for 3 node(s)") == 1; }))
    << slurp(d.log());
  EXPECT_TRUE(eventually([&] {
    auto text = slurp(reservations);
    return text.find("52:54:00:99:00:11,10.99.0.31,node01") != std::string::npos
           && text.find("52:54:00:99:00:32,10.99.0.12,node02") != std::string::npos
           && text.find("52:54:00:99:00:34,10.99.0.34,node04") != std::string::npos;
  }))
    << slurp(reservations);
  EXPECT_NE(slurp(hosts).find("10.99.0.34 node04 node04.cluster.test"), std::string::npos)
    << slurp(hosts);
  auto log = slurp(d.log());
  EXPECT_EQ(count(log, "provision re-apply: makehosts for"), 2u) << log;

  // another attribute: nothing re-applied (nor does the re-apply follow its own work)
  ASSERT_EQ(run_tool(home, "chdef node03 serialspeed=115200").rc, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  log = slurp(d.log());
  EXPECT_EQ(count(log, "provision re-apply: makehosts for"), 2u) << log;
  EXPECT_EQ(count(log, "provision re-apply: makedns"), 0u) << log; // DNS never configured
}

TEST(reapply, a_removed_node_and_group_and_site_changes_are_re_applied) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  auto home = d.home();
  auto conf_dir = dir.path / "dnsmasq.d";
  auto hosts = dir.path / "hosts";
  std::ofstream{hosts} << "127.0.0.1 localhost\n";
  {
    std::ofstream conf{home / "clusterws.conf", std::ios::app};
    conf << "provision_reapply = on\n"
         << "provision_reapply_delay_ms = 300\n"
         << "events_poll_ms = 50\n"
         << "hosts_file = " << hosts.string() << "\n"
         << "dnsmasq_conf_dir = " << conf_dir.string() << "\n"
         << "dhcp_reload_command = true\ndhcp_restart_command = true\n";
  }
  auto ok = [&](const std::string& cmd) {
    auto r = run_tool(home, cmd);
    ASSERT_EQ(r.rc, 0) << cmd << ": " << r.out;
  };
  ok("chdef -t site domain=cluster.test master=10.99.0.1");
  ok("mkdef -t network -o prov net=10.99.0.0 mask=255.255.255.0 mgtifname=srv0 "
     "dynamicrange=10.99.0.200-10.99.0.249");
  // the rack's addresses come from its group (xCAT's regex form)
  ok("mkdef -t group rack1 ip='|node(\\d+)|10.99.0.($1+10)|'");
  for (int i = 1; i <= 3; ++i) {
    auto n = std::to_string(i);
    ok("mkdef node0" + n + " groups=rack1,all mac=52:54:00:99:00:1" + n);
  }
  ASSERT_EQ(run_tool(home, "makehosts").rc, 0);
  d.start();
  cws::test::https_client c{d.ca(), d.port()};
  ASSERT_EQ(c.request("POST", d.url("/services/dhcp")).status, 201);
  ASSERT_EQ(c.request("POST", d.url("/nodes/rack1/dhcp")).status, 201);
  auto reservations = conf_dir / "clusterws-dhcp" / "hosts";
  ASSERT_NE(slurp(reservations).find("52:54:00:99:00:13,10.99.0.13,node03"), std::string::npos)
    << slurp(reservations);
  ASSERT_NE(slurp(hosts).find("10.99.0.13 node03 node03.cluster.test"), std::string::npos);

  // rmdef: the node's hosts line and reservation go (by name: its definition is gone)
  ok("rmdef node03");
  EXPECT_TRUE(eventually([&] {
    return slurp(hosts).find("node03") == std::string::npos
           && slurp(reservations).find("node03") == std::string::npos;
  }))
    << slurp(hosts) << slurp(reservations) << slurp(d.log());
  EXPECT_NE(slurp(hosts).find("10.99.0.12 node02 node02.cluster.test"), std::string::npos);
  EXPECT_TRUE(eventually(
    [&] { return count(slurp(d.log()), "provision re-apply: makedhcp -d for 1 node(s)") == 1; }))
    << slurp(d.log());

  // the group's addresses change: every member's line and reservation follow
  ok("chdef -t group rack1 ip='|node(\\d+)|10.99.0.($1+40)|'");
  EXPECT_TRUE(eventually([&] {
    auto h = slurp(hosts);
    auto r = slurp(reservations);
    return h.find("10.99.0.41 node01 node01.cluster.test") != std::string::npos
           && h.find("10.99.0.42 node02 node02.cluster.test") != std::string::npos
           && r.find("52:54:00:99:00:11,10.99.0.41,node01") != std::string::npos
           && r.find("52:54:00:99:00:12,10.99.0.42,node02") != std::string::npos;
  }))
    << slurp(hosts) << slurp(reservations) << slurp(d.log());
  EXPECT_EQ(slurp(hosts).find("10.99.0.11 "), std::string::npos) << slurp(hosts);

  // the site's domain: every node's names, and the server configuration's domain
  ok("chdef -t site domain=new.test");
  EXPECT_TRUE(eventually([&] {
    return slurp(hosts).find("10.99.0.41 node01 node01.new.test") != std::string::npos
           && slurp(conf_dir / "clusterws-dhcp.conf").find("new.test") != std::string::npos;
  }))
    << slurp(hosts) << slurp(conf_dir / "clusterws-dhcp.conf") << slurp(d.log());
  EXPECT_TRUE(eventually([&] {
    return slurp(d.log()).find("provision re-apply: makedhcp -n for") != std::string::npos;
  }))
    << slurp(d.log());
}

TEST(reapply, the_xnba_mirror_follows_every_boot_state_change_the_daemon_sees) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  auto home = d.home();
  auto tftp = dir.path / "tftp";
  std::ofstream{home / "clusterws.conf", std::ios::app}
    << "xnba_mirror = on\nprovision_reapply_delay_ms = 100\nevents_poll_ms = 50\n"
    << "tftp_root = " << tftp.string() << "\n";
  ASSERT_EQ(run_tool(home, "chdef -t site domain=cluster.test master=127.0.0.1").rc, 0);
  ASSERT_EQ(run_tool(home, "mkdef -t osimage -o debian12-x86_64-install-compute imagetype=linux "
                           "provmethod=install osname=Linux osvers=debian12 osarch=x86_64 "
                           "profile=compute pkgdir=/usr/lib/debian-installer/images/12/amd64/text")
              .rc,
            0);
  ASSERT_EQ(run_tool(home, "mkdef node01 groups=all mac=52:54:00:99:00:11").rc, 0);
  d.start();
  cws::test::https_client c{d.ca(), d.port()};
  auto file = tftp / "xcat" / "xnba" / "nodes" / "node01";
  // REST nodeset (the daemon's own write): the file follows through the change feed
  ASSERT_EQ(c.request("PUT", d.url("/nodes/node01/bootstate"),
                      R"({"osimage":"debian12-x86_64-install-compute"})")
              .status,
            200);
  EXPECT_TRUE(eventually([&] {
    return slurp(file).rfind("#!gpxe\n#install debian12-x86_64-compute\nimgfetch -n kernel "
                             "http://${next-server}/boot/node/node01/kernel\n",
                             0)
           == 0;
  }))
    << slurp(file) << slurp(d.log());
  EXPECT_TRUE(std::filesystem::exists(tftp / "xcat" / "xnba" / "nodes" / "node01.uefi"));
  ASSERT_EQ(c.request("PUT", d.url("/nodes/node01/bootstate"), R"({"action":"boot"})").status, 200);
  EXPECT_TRUE(eventually([&] { return slurp(file) == "#!gpxe\n#boot\nexit\n"; })) << slurp(file);
  // removed with the node (another process's commit)
  ASSERT_EQ(run_tool(home, "rmdef node01").rc, 0);
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(file); })) << slurp(d.log());
  EXPECT_FALSE(std::filesystem::exists(tftp / "xcat" / "xnba" / "nodes" / "node01.uefi"));
}

TEST(reapply, off_by_default_a_change_rewrites_nothing) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  auto home = d.home();
  auto hosts = dir.path / "hosts";
  std::ofstream{hosts} << "127.0.0.1 localhost\n";
  std::ofstream{home / "clusterws.conf", std::ios::app} << "hosts_file = " << hosts.string()
                                                        << "\nevents_poll_ms = 50\n";
  ASSERT_EQ(run_tool(home, "mkdef node01 groups=all ip=10.99.0.11").rc, 0);
  d.start();
  ASSERT_EQ(run_tool(home, "chdef node01 ip=10.99.0.21").rc, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(slurp(hosts), "127.0.0.1 localhost\n");
}

} // namespace
