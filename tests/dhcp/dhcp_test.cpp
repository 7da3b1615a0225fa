// makedhcp against real servers: golden renders checked by the servers' own checkers
// (dnsmasq --test, kea-dhcp4 -t), then dnsmasq and Kea 2.2 started in a network namespace
// pair with the configuration makedhcp wrote, and busybox udhcpc with a node's MAC asking
// them as BIOS PXE, UEFI and iPXE clients would.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/netns.hpp"
#include "api/dhcp_backend.hpp"

namespace {

using cws::api::dhcp_config;
using cws::api::dhcp_entry;
using cws::api::dhcp_intent;
using cws::api::dhcp_subnet;

using result = cws::test::tool_output;
using cws::test::slurp;

int sh(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

dhcp_intent two_networks() {
  dhcp_intent in;
  in.domain = "cluster.test";
  in.lease = 43200;
  in.tftp_root = "/srv/tftp";
  in.boot_url = "http://10.99.0.1:8080/boot/ipxe";
  in.interfaces = {"srv0"};
  dhcp_subnet a;
  a.name = "prov";
  a.net = "10.99.0.0";
  a.mask = "255.255.255.0";
  a.prefix = 24;
  a.interface = "srv0";
  a.gateway = "10.99.0.254";
  a.domain = "cluster.test";
  a.nameservers = "10.99.0.1";
  a.ntpservers = "10.99.0.1";
  a.server = "10.99.0.1";
  a.mtu = "9000";
  a.pools = {{"10.99.0.100", "10.99.0.149"}, {"10.99.0.200", "10.99.0.209"}};
  dhcp_subnet b;
  b.name = "ib";
  b.net = "172.30.0.0";
  b.mask = "255.255.0.0";
  b.prefix = 16;
  b.domain = "ib.test";
  in.subnets = {a, b};
  in.reservations = {{"node01", "52:54:00:99:00:11", "10.99.0.11", "node01", false},
                     {"node02", "52:54:00:99:00:12", "10.99.0.12", "node02", false},
                     {"node02", "52:54:00:99:00:22", "10.99.0.22", "node02-eth1", false}};
  return in;
}

TEST(dhcp_render, dnsmasq_configuration_is_the_golden_text_and_dnsmasq_accepts_it) {
  cws::test::temp_dir dir;
  dhcp_config cfg;
  cfg.dnsmasq_conf_dir = dir.path / "dnsmasq.d";
  cfg.restart_command = "true";
  auto backend = cws::api::make_dnsmasq_backend(cfg);
  auto c = backend->render_config(two_networks());
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_EQ(c.files[0].path, cfg.dnsmasq_conf_dir / "clusterws-dhcp.conf");
  auto hosts = (cfg.dnsmasq_conf_dir / "clusterws-dhcp" / "hosts").string();
  EXPECT_EQ(c.files[0].content,
            "# clusterws makedhcp -n: dnsmasq DHCP and TFTP. Generated from the store; makedhcp "
            "-n\n# rewrites it; makedhcp <noderange> writes the reservations' "
            "dhcp-hostsfile.\n"
            "interface=srv0\n"
            "dhcp-authoritative\n"
            "dhcp-hostsfile="
              + hosts
              + "\n"
                "# prov: 10.99.0.0/24 on srv0\n"
                "dhcp-range=set:cws-net0,10.99.0.0,static,255.255.255.0,43200\n"
                "dhcp-range=set:cws-net0,10.99.0.100,10.99.0.149,255.255.255.0,43200\n"
                "dhcp-range=set:cws-net0,10.99.0.200,10.99.0.209,255.255.255.0,43200\n"
                "dhcp-option=tag:cws-net0,option:router,10.99.0.254\n"
                "dhcp-option=tag:cws-net0,option:dns-server,10.99.0.1\n"
                "dhcp-option=tag:cws-net0,option:domain-name,cluster.test\n"
                "dhcp-option=tag:cws-net0,option:domain-search,cluster.test\n"
                "dhcp-option=tag:cws-net0,option:ntp-server,10.99.0.1\n"
                "dhcp-option=tag:cws-net0,option:mtu,9000\n"
                "# ib: 172.30.0.0/16\n"
                "dhcp-range=set:cws-net1,172.30.0.0,static,255.255.0.0,43200\n"
                "dhcp-option=tag:cws-net1,option:domain-name,ib.test\n"
                "dhcp-option=tag:cws-net1,option:domain-search,ib.test\n"
                "# TFTP: boot loaders for PXE firmware\n"
                "enable-tftp\n"
                "tftp-root=/srv/tftp\n"
                "# boot files: BIOS PXE -> undionly.kpxe, UEFI x86-64 -> ipxe.efi, iPXE -> the "
                "boot\n# listener's script. The last matching dhcp-boot wins: generic lines "
                "first.\n"
                "dhcp-match=set:ipxe,175\n"
                "dhcp-userclass=set:ipxe,iPXE\n"
                "dhcp-match=set:bios,option:client-arch,0\n"
                "dhcp-match=set:efi64,option:client-arch,7\n"
                "dhcp-match=set:efi64,option:client-arch,9\n"
                "dhcp-boot=tag:!ipxe,tag:bios,undionly.kpxe\n"
                "dhcp-boot=tag:!ipxe,tag:efi64,ipxe.efi\n"
                "dhcp-boot=tag:ipxe,http://10.99.0.1:8080/boot/ipxe\n");
  // the check runs before anything is written; then dnsmasq's own checker on the file
  ASSERT_EQ(c.checks.size(), 1u);
  EXPECT_EQ(c.checks[0].run(), "");
  ASSERT_EQ(cws::api::apply_dhcp_change(c), "");
  EXPECT_EQ(sh("dnsmasq --test --conf-file='" + c.files[0].path.string() + "' 2>/dev/null"), 0);
  // the same again: nothing to write, nothing to restart
  auto again = backend->render_config(two_networks());
  EXPECT_TRUE(again.files.empty());
  EXPECT_TRUE(again.steps.empty());
}

TEST(dhcp_render, a_configuration_dnsmasq_refuses_is_never_written) {
  cws::test::temp_dir dir;
  dhcp_config cfg;
  cfg.dnsmasq_conf_dir = dir.path;
  auto in = two_networks();
  in.tftp_root = "/srv/tftp\ndhcp-range=garbage"; // what a broken value would give
  auto c = cws::api::make_dnsmasq_backend(cfg)->render_config(in);
  auto e = cws::api::apply_dhcp_change(c);
  EXPECT_NE(e.find("The new dnsmasq configuration is not valid"), std::string::npos) << e;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "clusterws-dhcp.conf"));
}

TEST(dhcp_render, dnsmasq_reservations_are_one_hosts_file_rewritten_only_when_it_changes) {
  cws::test::temp_dir dir;
  dhcp_config cfg;
  cfg.dnsmasq_conf_dir = dir.path;
  cfg.reload_command = "true reload";
  auto backend = cws::api::make_dnsmasq_backend(cfg);
  auto in = two_networks();
  auto c = backend->render_nodes(in, {});
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_EQ(c.files[0].path, dir.path / "clusterws-dhcp" / "hosts");
  EXPECT_EQ(c.files[0].content,
            "# clusterws makedhcp: one dhcp-host per MAC, each node's after its #node line.\n"
            "#node node01\n52:54:00:99:00:11,10.99.0.11,node01\n"
            "#node node02\n52:54:00:99:00:12,10.99.0.12,node02\n"
            "52:54:00:99:00:22,10.99.0.22,node02-eth1\n");
  ASSERT_EQ(c.steps.size(), 1u); // dnsmasq re-reads its hosts file at SIGHUP
  EXPECT_EQ(c.steps[0].description, "true reload");
  // the daemon's umask is 0077; dnsmasq reads the file as its own user all the same
  auto old_mask = ::umask(0077);
  auto applied = cws::api::apply_dhcp_change(c);
  ::umask(old_mask);
  ASSERT_EQ(applied, "");
  namespace fs = std::filesystem;
  EXPECT_EQ(fs::status(dir.path / "clusterws-dhcp").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(dir.path / "clusterws-dhcp" / "hosts").permissions(), fs::perms(0644));
  std::vector<dhcp_entry> held;
  ASSERT_EQ(backend->query(held), "");
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(held[2].node, "node02");
  EXPECT_EQ(held[2].ip, "10.99.0.22");
  EXPECT_EQ(held[2].hostname, "node02-eth1");
  // unchanged: nothing written, no reload
  c = backend->render_nodes(in, {});
  EXPECT_TRUE(c.files.empty());
  EXPECT_TRUE(c.steps.empty());
  // one node asked for: the others stay as the server holds them
  auto one = in;
  one.reservations = {{"node01", "52:54:00:99:00:11", "10.99.0.31", "node01", false}};
  c = backend->render_nodes(one, {});
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_NE(c.files[0].content.find("52:54:00:99:00:11,10.99.0.31,node01\n"), std::string::npos);
  EXPECT_NE(c.files[0].content.find("52:54:00:99:00:22,10.99.0.22,node02-eth1\n"),
            std::string::npos);
  // removal: node02's lines go; a node the server does not hold changes nothing
  in.reservations.clear();
  c = backend->render_nodes(in, {"node02", "node09"});
  ASSERT_EQ(c.files.size(), 1u);
  auto dry = cws::api::dhcp_dry_run_text(c);
  EXPECT_NE(dry.find("-52:54:00:99:00:22,10.99.0.22,node02-eth1\n"), std::string::npos) << dry;
  EXPECT_NE(dry.find("would run: true reload\n"), std::string::npos) << dry;
  ASSERT_EQ(cws::api::apply_dhcp_change(c), "");
  held.clear();
  ASSERT_EQ(backend->query(held), "");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].node, "node01");
  EXPECT_TRUE(backend->render_nodes(in, {"node09"}).files.empty());
}

TEST(dhcp_render, kea_configuration_is_the_golden_text_and_kea_dhcp4_accepts_it) {
  cws::test::temp_dir dir;
  dhcp_config cfg;
  cfg.kea_conf_file = dir.path / "kea-dhcp4.conf";
  cfg.kea_control_socket = dir.path / "kea.sock";
  cfg.kea_lease_file = dir.path / "leases.csv";
  auto backend = cws::api::make_kea_backend(cfg);
  auto c = backend->render_nodes(two_networks(), {});
  ASSERT_EQ(c.files.size(), 1u);
  auto d = dir.path.string();
  EXPECT_EQ(
    c.files[0].content,
    "{\n\"Dhcp4\": {\n"
    "  \"interfaces-config\": { \"interfaces\": [ \"srv0\" ] },\n"
    "  \"control-socket\": { \"socket-type\": \"unix\", \"socket-name\": \""
      + d + "/kea.sock\" },\n"
      + "  \"lease-database\": { \"type\": \"memfile\", \"persist\": true, \"name\": \"" + d
      + "/leases.csv\", \"lfc-interval\": 3600 },\n"
        "  \"valid-lifetime\": 43200,\n"
        "  \"authoritative\": true,\n"
        "  \"client-classes\": [\n"
        "    { \"name\": \"cws-ipxe\", \"test\": \"option[175].exists or "
        "substring(option[77].hex,0,4) == 'iPXE'\", \"boot-file-name\": "
        "\"http://10.99.0.1:8080/boot/ipxe\" },\n"
        "    { \"name\": \"cws-bios\", \"test\": \"not member('cws-ipxe') and option[93].hex == "
        "0x0000\", \"boot-file-name\": \"undionly.kpxe\" },\n"
        "    { \"name\": \"cws-efi64\", \"test\": \"not member('cws-ipxe') and (option[93].hex "
        "== 0x0007 or option[93].hex == 0x0009)\", \"boot-file-name\": \"ipxe.efi\" }\n"
        "  ],\n"
        "  \"subnet4\": [\n"
        "    { \"id\": 174260224, \"subnet\": \"10.99.0.0/24\", \"interface\": \"srv0\", "
        "\"next-server\": \"10.99.0.1\",\n"
        "      \"pools\": [ { \"pool\": \"10.99.0.100 - 10.99.0.149\" }, { \"pool\": "
        "\"10.99.0.200 - 10.99.0.209\" } ],\n"
        "      \"option-data\": [ { \"name\": \"routers\", \"data\": \"10.99.0.254\" }, { "
        "\"name\": \"domain-name-servers\", \"data\": \"10.99.0.1\" }, { \"name\": "
        "\"domain-name\", \"data\": \"cluster.test\" }, { \"name\": \"domain-search\", "
        "\"data\": \"cluster.test\" }, { \"name\": \"ntp-servers\", \"data\": \"10.99.0.1\" }, "
        "{ \"name\": \"interface-mtu\", \"data\": \"9000\" } ],\n"
        "      \"reservations\": [\n"
        "        { \"hw-address\": \"52:54:00:99:00:11\", \"ip-address\": \"10.99.0.11\", "
        "\"hostname\": \"node01\", \"user-context\": { \"node\": \"node01\" } },\n"
        "        { \"hw-address\": \"52:54:00:99:00:12\", \"ip-address\": \"10.99.0.12\", "
        "\"hostname\": \"node02\", \"user-context\": { \"node\": \"node02\" } },\n"
        "        { \"hw-address\": \"52:54:00:99:00:22\", \"ip-address\": \"10.99.0.22\", "
        "\"hostname\": \"node02-eth1\", \"user-context\": { \"node\": \"node02\" } } ] },\n"
        "    { \"id\": 2887647232, \"subnet\": \"172.30.0.0/16\",\n"
        "      \"pools\": [],\n"
        "      \"option-data\": [ { \"name\": \"domain-name\", \"data\": \"ib.test\" }, { "
        "\"name\": \"domain-search\", \"data\": \"ib.test\" } ],\n"
        "      \"reservations\": [] }\n"
        "  ]\n"
        "}\n}\n");
  EXPECT_TRUE(c.steps.empty()); // no control socket: Kea reads it when it starts
  ASSERT_EQ(c.notes.size(), 1u);
  ASSERT_EQ(cws::api::apply_dhcp_change(c), "");
  // Kea checks that the interfaces exist: its checker runs where srv0 does
  cws::test::netns_pair ns{"cws-dhcp"};
  ASSERT_TRUE(ns.ok()) << "cannot create network namespaces (root and iproute2 needed)";
  EXPECT_EQ(sh(ns.in_server() + "kea-dhcp4 -t '" + cfg.kea_conf_file.string() + "' >'" + d
               + "/check.log' 2>&1"),
            0)
    << slurp(dir.path / "check.log");
  // what it wrote reads back as the reservations it holds
  std::vector<dhcp_entry> held;
  ASSERT_EQ(backend->query(held), "");
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(held[1].node, "node02");
  EXPECT_EQ(held[1].mac, "52:54:00:99:00:12");
  // -n keeps them; a removal drops only that node's
  auto in = two_networks();
  in.reservations.clear();
  EXPECT_TRUE(backend->render_config(in).files.empty());
  auto removed = backend->render_nodes(in, {"node02"});
  ASSERT_EQ(removed.files.size(), 1u);
  EXPECT_EQ(removed.files[0].content.find("node02"), std::string::npos);
  EXPECT_NE(removed.files[0].content.find("node01"), std::string::npos);
}

TEST(dhcp_parse, dnsmasq_host_lines_read_back_with_their_fields_in_any_order) {
  auto e = cws::api::parse_dnsmasq_hosts("# comment\n52:54:00:99:00:11,10.99.0.11,node01\n"
                                         "\n 52-54-00-99-00-12 , id:*, node02,10.0.0.2,12h\r\n"
                                         "52:54:00:99:00:13,ignore\nnot a line\n",
                                         "n");
  ASSERT_EQ(e.size(), 3u); // the ignored MAC is an entry without an address
  EXPECT_EQ(e[2].ip, "");
  EXPECT_EQ(e[0].mac, "52:54:00:99:00:11");
  EXPECT_EQ(e[0].ip, "10.99.0.11");
  EXPECT_EQ(e[0].hostname, "node01");
  EXPECT_EQ(e[1].mac, "52:54:00:99:00:12");
  EXPECT_EQ(e[1].ip, "10.0.0.2");
  EXPECT_EQ(e[1].hostname, "node02");
  EXPECT_EQ(e[1].node, "n");
  e = cws::api::parse_dnsmasq_hosts("52:54:00:99:00:01,10.0.0.1,a\n#node b\n"
                                    "52:54:00:99:00:02,10.0.0.2,b-eth1\n#node c\n"
                                    "52:54:00:99:00:03,ignore\n",
                                    "");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].node, "");
  EXPECT_EQ(e[1].node, "b");
  EXPECT_EQ(e[2].node, "c");
  EXPECT_EQ(e[2].ip, "");
}

TEST(dhcp_parse, kea_answers_and_configurations_are_read_or_refused) {
  int result = -1;
  std::string text;
  EXPECT_TRUE(cws::api::parse_kea_answer(R"({"result": 1, "text": "bad"})", result, text));
  EXPECT_EQ(result, 1);
  EXPECT_EQ(text, "bad");
  EXPECT_TRUE(cws::api::parse_kea_answer(R"([{"result": 0}])", result, text));
  EXPECT_EQ(result, 0);
  EXPECT_FALSE(cws::api::parse_kea_answer("{\"result\": \"x\"}", result, text));
  EXPECT_FALSE(cws::api::parse_kea_answer("{\"res", result, text));
  std::vector<dhcp_entry> out;
  EXPECT_EQ(cws::api::parse_kea_reservations(
              R"({"result":0,"arguments":{"Dhcp4":{"subnet4":[{"reservations":[
                {"hw-address":"AA:BB:CC:DD:EE:FF","ip-address":"10.0.0.5","hostname":"h5"},
                {"hw-address":"aa:bb:cc:dd:ee:01","ip-address":"10.0.0.6","hostname":"x",
                 "user-context":{"node":"n6"}},
                {"ip-address":"10.0.0.7"}]}]}}})",
              out),
            "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].node, "h5");
  EXPECT_EQ(out[0].mac, "aa:bb:cc:dd:ee:ff");
  EXPECT_EQ(out[1].node, "n6");
  EXPECT_EQ(cws::api::parse_kea_reservations("// a comment\n{}", out), "not JSON");
  EXPECT_EQ(cws::api::parse_kea_reservations("{\"Dhcp6\":{}}", out), "no Dhcp4 configuration");
}

TEST(dhcp_parse, macs_are_taken_as_xcat_takes_them) {
  EXPECT_EQ(cws::api::normalize_mac("52:54:00:AB:00:11"), "52:54:00:ab:00:11");
  EXPECT_EQ(cws::api::normalize_mac("52-54-00-ab-00-11"), "52:54:00:ab:00:11");
  EXPECT_EQ(cws::api::normalize_mac("525400ab0011"), "52:54:00:ab:00:11");
  EXPECT_EQ(cws::api::normalize_mac("20:00:00:00:00:00:00:00:01"), "20:00:00:00:00:00:00:00:01");
  EXPECT_EQ(cws::api::normalize_mac("52:54:00:ab:00"), "");
  EXPECT_EQ(cws::api::normalize_mac("52:54-00:ab:00:11"), "");
  EXPECT_EQ(cws::api::normalize_mac("zz"), "");
  EXPECT_EQ(cws::api::normalize_mac("52:54:00:ab:00:1g"), "");
}

// -- the tool against real servers in a network namespace ----------------------------------

class makedhcp_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = run("clusterctl init --admin-password adminpw");
    ASSERT_EQ(r.rc, 0) << r.err;
    std::ofstream conf{home() / "clusterws.conf", std::ios::app};
    conf << "dnsmasq_conf_dir = " << (dir_.path / "dnsmasq.d").string() << '\n'
         << "dhcp_reload_command = if [ -f " << (dir_.path / "dnsmasq.pid").string()
         << " ]; then kill -HUP $(cat " << (dir_.path / "dnsmasq.pid").string() << "); fi\n"
         << "dhcp_restart_command = true\n"
         << "kea_conf_file = " << (dir_.path / "kea" / "kea-dhcp4.conf").string() << '\n'
         << "kea_control_socket = " << (dir_.path / "kea" / "kea.sock").string() << '\n'
         << "kea_lease_file = " << (dir_.path / "kea" / "leases.csv").string() << '\n'
         << "tftp_root = " << (dir_.path / "tftp").string() << '\n';
    std::filesystem::create_directories(dir_.path / "tftp");
    std::filesystem::create_directories(dir_.path / "kea");
    ASSERT_EQ(run("chdef -t site domain=cluster.test dhcpinterfaces=srv0 master=10.99.0.1").rc, 0);
    ASSERT_EQ(run("mkdef -t network -o prov net=10.99.0.0 mask=255.255.255.0 mgtifname=srv0 "
                  "gateway=10.99.0.254 dynamicrange=10.99.0.100-10.99.0.149 "
                  "nameservers=10.99.0.1")
                .rc,
              0);
    ASSERT_EQ(run("mkdef node01 groups=all,compute mac=52:54:00:99:00:11 ip=10.99.0.11").rc, 0);
    ASSERT_EQ(run("mkdef node02 groups=all,compute mac=52:54:00:99:00:12 ip=10.99.0.12").rc, 0);
  }

  std::filesystem::path home() const {
    return dir_.path / "home";
  }

  result run(const std::string& cmd) {
    return cws::test::run_tool_streams(home(), cmd);
  }

  /// dnsmasq in the server namespace with the configuration makedhcp wrote: foreground, no
  /// DNS, its own pid and lease files, root (the temp directories are private).
  std::unique_ptr<cws::test::test_process> start_dnsmasq(const cws::test::netns_pair& ns) {
    auto d = dir_.path.string();
    auto p = std::make_unique<cws::test::test_process>(
      std::vector<std::string>{"ip", "netns", "exec", ns.server(), "dnsmasq", "-k", "--port=0",
                               "--user=root", "--conf-file=" + d + "/dnsmasq.d/clusterws-dhcp.conf",
                               "--pid-file=" + d + "/dnsmasq.pid",
                               "--dhcp-leasefile=" + d + "/dnsmasq.leases", "--log-dhcp",
                               "--log-facility=" + d + "/dnsmasq.log"},
      d + "/dnsmasq.out");
    for (int i = 0; i < 100 && !std::filesystem::exists(dir_.path / "dnsmasq.pid"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return p;
  }

  std::unique_ptr<cws::test::test_process> start_kea(const cws::test::netns_pair& ns) {
    auto d = dir_.path.string();
    auto p = std::make_unique<cws::test::test_process>(
      std::vector<std::string>{"ip", "netns", "exec", ns.server(), "kea-dhcp4", "-c",
                               d + "/kea/kea-dhcp4.conf"},
      d + "/kea.out",
      std::vector<std::string>{"KEA_PIDFILE_DIR=" + d + "/kea", "KEA_LOCKFILE_DIR=" + d + "/kea"});
    for (int i = 0; i < 200 && !std::filesystem::exists(dir_.path / "kea" / "kea.sock"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return p;
  }

  cws::test::temp_dir dir_;
};

TEST_F(makedhcp_test, refuses_option_mixes_and_reports_nodes_as_xcat_does) {
  auto r = run("makedhcp");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Usage: makedhcp -n"), std::string::npos) << r.err;
  r = run("makedhcp -q -a");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: The -q option cannot be used with other options.\n");
  r = run("makedhcp -n -d");
  EXPECT_EQ(r.err, "Error: The -n option cannot be used with other options.\n");
  r = run("makedhcp node01 -s 'option root-path \"x\";'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("The -s option contains ISC DHCP statement text"), std::string::npos);
  ASSERT_EQ(run("mkdef node03 groups=all ip=10.99.0.13").rc, 0);
  ASSERT_EQ(run("mkdef node04 groups=all mac=52:54:00:zz:00:14 ip=10.99.0.14").rc, 0);
  ASSERT_EQ(run("mkdef node05 groups=all mac=52:54:00:99:00:15 ip=10.99.0.120").rc, 0);
  ASSERT_EQ(run("mkdef node06 groups=all mac=52:54:00:99:00:16").rc, 0);
  ASSERT_EQ(run("mkdef node07 groups=all mac=52:54:00:99:00:17 ip=10.1.0.7").rc, 0);
  r = run("makedhcp node01,node03,node04,node05,node06,node07");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Warning: Unable to find mac address for node03\n"
                   "Warning: The hostname node06 of node node06 could not be resolved.\n"
                   "Warning: Unable to find a DHCP subnet for node07 (10.1.0.7), skipping DHCP "
                   "reservation\n"
                   "Error: Invalid mac address 52:54:00:zz:00:14 for node04\n"
                   "Error: Node node05 has IP 10.99.0.120 which is inside the DHCP dynamic range. "
                   "Move the node IP outside the dynamic range or adjust the range in the "
                   "networks table.\n");
  // the good node was written all the same, as xCAT's does
  auto hosts = dir_.path / "dnsmasq.d" / "clusterws-dhcp" / "hosts";
  EXPECT_NE(slurp(hosts).find("#node node01\n52:54:00:99:00:11,10.99.0.11,node01\n"),
            std::string::npos);
  // two nodes sharing an address: nothing at all
  ASSERT_EQ(run("chdef node02 ip=10.99.0.11").rc, 0);
  r = run("makedhcp node01,node02");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "Error: Duplicated IP addresses in hosts table for following nodes: node02,node01\n");
  EXPECT_FALSE(
    std::filesystem::exists(dir_.path / "dnsmasq.d" / "clusterws-dhcp-hosts" / "node02"));
  r = run("makedhcp nosuch");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Invalid nodes and/or groups in noderange: nosuch\n");
  // -n without a domain anywhere: xCAT's error, the old configuration kept
  ASSERT_EQ(run("chdef -t site domain=").rc, 0);
  r = run("makedhcp -n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: No domain defined for 10.99.0.0 entry in networks table, and no "
                   "domain defined in site table.\n");
  EXPECT_FALSE(std::filesystem::exists(dir_.path / "dnsmasq.d" / "clusterws-dhcp.conf"));
}

TEST_F(makedhcp_test, dry_run_prints_the_diff_and_the_reload_and_writes_nothing) {
  auto r = run("makedhcp -n --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto conf = (dir_.path / "dnsmasq.d" / "clusterws-dhcp.conf").string();
  EXPECT_NE(r.out.find("would check: dnsmasq --test with the new " + conf + "\n"),
            std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("+++ " + conf + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+dhcp-boot=tag:ipxe,http://10.99.0.1/boot/ipxe\n"), std::string::npos);
  EXPECT_NE(r.out.find("would run: true\n"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(conf));
  r = run("makedhcp -a --dry-run");
  EXPECT_NE(r.out.find("+52:54:00:99:00:12,10.99.0.12,node02\n"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_.path / "dnsmasq.d" / "clusterws-dhcp"));
}

TEST_F(makedhcp_test, dnsmasq_answers_each_node_with_its_address_name_and_boot_file) {
  cws::test::netns_pair ns{"cws-dhcp"};
  ASSERT_TRUE(ns.ok()) << "cannot create network namespaces (root and iproute2 needed)";
  ASSERT_EQ(run("makedhcp -n").rc, 0);
  auto dnsmasq = start_dnsmasq(ns);
  ASSERT_TRUE(dnsmasq->running()) << slurp(dir_.path / "dnsmasq.out");
  auto r = run("makedhcp -a"); // the hosts file, then SIGHUP
  ASSERT_EQ(r.rc, 0) << r.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(ns.set_client_mac("52:54:00:99:00:12"));
  auto plain = ns.dhcp_request();
  EXPECT_EQ(plain["ip"], "10.99.0.12");
  EXPECT_EQ(plain["hostname"], "node02");
  EXPECT_EQ(plain["router"], "10.99.0.254");
  EXPECT_EQ(plain["domain"], "cluster.test");
  EXPECT_EQ(plain["siaddr"], "10.99.0.1");
  EXPECT_EQ(plain.count("bootfile") + plain.count("boot_file"), 0u);
  auto bios = ns.dhcp_request({"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"});
  EXPECT_EQ(bios["ip"], "10.99.0.12");
  EXPECT_EQ(bios["bootfile"], "undionly.kpxe");
  auto uefi = ns.dhcp_request({"-V", "PXEClient:Arch:00007:UNDI:003016", "-x", "0x5d:0007"});
  EXPECT_EQ(uefi["bootfile"], "ipxe.efi");
  auto ipxe = ns.dhcp_request({"-x", "0xaf:0101", "-x", "0x5d:0007"});
  EXPECT_EQ(ipxe["ip"], "10.99.0.12");
  EXPECT_EQ(ipxe["bootfile"], "http://10.99.0.1/boot/ipxe");
  // -q: what dnsmasq holds, in xCAT's words
  r = run("makedhcp -q compute");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "node01: ip-address = 10.99.0.11, hardware-address = 52:54:00:99:00:11\n"
                   "node02: ip-address = 10.99.0.12, hardware-address = 52:54:00:99:00:12\n");
  EXPECT_EQ(r.err, "");
  // a node added later: the hosts file again, and SIGHUP
  ASSERT_EQ(run("mkdef node03 groups=all mac=52:54:00:99:00:13 ip=10.99.0.13").rc, 0);
  ASSERT_EQ(run("makedhcp node03").rc, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(ns.set_client_mac("52:54:00:99:00:13"));
  EXPECT_EQ(ns.dhcp_request()["ip"], "10.99.0.13");
  // -d: the reservation goes (reload by SIGHUP, which dnsmasq survives: no tags on hosts)
  ASSERT_TRUE(ns.set_client_mac("52:54:00:99:00:12"));
  r = run("makedhcp -d node02");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(dnsmasq->running()) << "dnsmasq died on SIGHUP";
  auto after = ns.dhcp_request({}, 6);
  EXPECT_NE(after["ip"], "10.99.0.12");
  EXPECT_EQ(after["hostname"], "");
  if (!after["ip"].empty()) { // the dynamic pool
    uint32_t ip = 0;
    ASSERT_TRUE(cws::api::parse_ipv4(after["ip"], ip));
    EXPECT_GE(ip & 255, 100u);
    EXPECT_LE(ip & 255, 149u);
  }
  // -q: the store says what the server no longer holds
  r = run("makedhcp -q node02");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "Warning: node02: the store says ip-address = 10.99.0.12, hardware-address = "
                   "52:54:00:99:00:12, which the DHCP server does not hold.\n");
}

TEST_F(makedhcp_test, kea_answers_after_config_set_and_forgets_a_removed_node) {
  cws::test::netns_pair ns{"cws-dhcp"};
  ASSERT_TRUE(ns.ok()) << "cannot create network namespaces (root and iproute2 needed)";
  ASSERT_EQ(run("chdef -t site dhcpbackend=kea").rc, 0);
  auto r = run("makedhcp -n");
  ASSERT_EQ(r.rc, 0) << r.err; // Kea not running yet: written, with a warning
  EXPECT_NE(r.err.find("Kea is not running"), std::string::npos) << r.err;
  ASSERT_EQ(run("makedhcp node01").rc, 0);
  auto kea = start_kea(ns);
  ASSERT_TRUE(kea->running()) << slurp(dir_.path / "kea.out");
  ASSERT_TRUE(std::filesystem::exists(dir_.path / "kea" / "kea.sock"))
    << slurp(dir_.path / "kea.out");
  // node02 is applied live: config-test and config-set on the control socket
  r = run("makedhcp node02");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(ns.set_client_mac("52:54:00:99:00:12"));
  auto plain = ns.dhcp_request();
  EXPECT_EQ(plain["ip"], "10.99.0.12");
  EXPECT_EQ(plain["hostname"], "node02");
  EXPECT_EQ(plain["router"], "10.99.0.254");
  EXPECT_EQ(plain["siaddr"], "10.99.0.1");
  auto bios = ns.dhcp_request({"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"});
  EXPECT_EQ(bios["boot_file"], "undionly.kpxe");
  auto uefi = ns.dhcp_request({"-V", "PXEClient:Arch:00007:UNDI:003016", "-x", "0x5d:0007"});
  EXPECT_EQ(uefi["boot_file"], "ipxe.efi");
  auto ipxe = ns.dhcp_request({"-x", "0xaf:0101", "-x", "0x5d:0007"});
  EXPECT_EQ(ipxe["boot_file"], "http://10.99.0.1/boot/ipxe");
  // -q asks the running Kea (config-get)
  r = run("makedhcp -q node01,node02");
  EXPECT_EQ(r.out, "node01: ip-address = 10.99.0.11, hardware-address = 52:54:00:99:00:11\n"
                   "node02: ip-address = 10.99.0.12, hardware-address = 52:54:00:99:00:12\n");
  EXPECT_EQ(r.err, "");
  // a configuration Kea refuses changes nothing: an interface this host does not have
  std::string before = slurp(dir_.path / "kea" / "kea-dhcp4.conf");
  ASSERT_EQ(run("chdef -t network -o prov mgtifname=srv9").rc, 0);
  ASSERT_EQ(run("chdef -t site dhcpinterfaces=srv9").rc, 0);
  r = run("makedhcp -n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Kea refused config-test"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir_.path / "kea" / "kea-dhcp4.conf"), before);
  ASSERT_EQ(run("chdef -t network -o prov mgtifname=srv0").rc, 0);
  ASSERT_EQ(run("chdef -t site dhcpinterfaces=srv0").rc, 0);
  // -d: gone from the running server
  r = run("makedhcp -d node02");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto after = ns.dhcp_request({}, 6);
  EXPECT_NE(after["ip"], "10.99.0.12");
  EXPECT_EQ(after["hostname"], "");
  r = run("makedhcp -q node02");
  EXPECT_EQ(r.out, "");
  kea->stop();
}

} // namespace
