// makehosts end to end: the built tool against a temporary home whose hosts_file is a
// temporary file; the lines compared with what xCAT's hosts.pm writes for the same tables.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"

namespace {

namespace fs = std::filesystem;

using result = cws::test::tool_output;
using cws::test::slurp;

ino_t inode(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

class makehosts_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    ASSERT_EQ(run("clusterctl init --admin-password adminpw").rc, 0);
    std::ofstream{home() / "clusterws.conf", std::ios::app} << "hosts_file = " << hosts().string()
                                                            << "\n";
  }

  static void TearDownTestSuite() {
    delete dir_;
  }

  void SetUp() override {
    run("rmdef all");
    run("rmdef -t group compute");
    run("rmdef -t network net10,ib");
    // a store as in the docs: a site domain, a network with its own domain and one
    // without, names, aliases, other interfaces, nics in both of xCAT's forms, a group's
    // regular expression
    for (const char* cmd : {
           "chdef -t site clustersite domain=cluster.local",
           "mkdef -t network net10 net=10.0.0.0 mask=255.255.0.0 domain=ten.local",
           "mkdef -t network ib net=10.1.0.0 mask=255.255.0.0",
           "mkdef -t group compute 'ip=|n(\\d+)|10.0.0.($1)|'",
           "mkdef n1 groups=all ip=10.0.0.1 hostnames=n1-alias,n1.other.org "
           "otherinterfaces=-bmc:10.0.1.1 nicips.ib0=10.1.0.1 nicaliases.ib0=n1-ibalias",
           "mkdef n2 groups=all ip=192.168.0.2 hostnames=n2.cluster.local",
           "mkdef n3 groups=compute,all",
           "mkdef n4 groups=all ip=10.0.0.4 'nicips=eth1!10.2.0.4|10.2.0.14' "
           "'nichostnamesuffixes=eth1!-e1|-e1b'",
           "mkdef n6 groups=all",
         }) {
      auto r = run(cmd);
      ASSERT_EQ(r.rc, 0) << cmd << ": " << r.err;
    }
    write_hosts(foreign);
  }

  static fs::path home() {
    return dir_->path / "home";
  }
  static fs::path hosts() {
    return dir_->path / "etc" / "hosts";
  }
  static void write_hosts(const std::string& text) {
    fs::create_directories(hosts().parent_path());
    std::ofstream{hosts(), std::ios::trunc} << text;
  }

  static result run(const std::string& cmd) {
    return cws::test::run_tool_streams(home(), cmd);
  }

  /// Lines nobody's makehosts made, and stale lines for n1 (by address), n2 (by name), n3.
  const std::string foreign = "127.0.0.1 localhost\n"
                              "::1 localhost ip6-localhost\n"
                              "# comment\n"
                              "192.168.50.5 printer\n"
                              "10.0.0.3 stale-name\n"
                              "10.0.0.1 n1-old\n"
                              "10.9.9.9 n2\n";

  static cws::test::temp_dir* dir_;
};

cws::test::temp_dir* makehosts_test::dir_ = nullptr;

TEST_F(makehosts_test, writes_xcats_lines_in_place_and_keeps_every_other_line) {
  auto r = run("makehosts");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // hosts.pm's "ip short long others" with its trailing blank; the domain of the network
  // holding the address, else the site's; n6 has no hosts attribute and is left out
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n"
                            "::1 localhost ip6-localhost\n"
                            "# comment\n"
                            "192.168.50.5 printer\n"
                            "10.0.0.3 n3 n3.ten.local \n"
                            "10.0.0.1 n1 n1.other.org n1-alias \n"
                            "192.168.0.2 n2 n2.cluster.local \n"
                            "10.0.1.1 n1-bmc n1-bmc.ten.local \n"
                            "10.1.0.1 n1-ib0 n1-ib0.cluster.local n1-ibalias\n"
                            "10.0.0.4 n4 n4.ten.local \n"
                            "10.2.0.4 n4-e1 n4-e1.cluster.local \n"
                            "10.2.0.14 n4-e1b n4-e1b.cluster.local \n");
  // again: nothing changes
  auto before = slurp(hosts());
  EXPECT_EQ(run("makehosts").rc, 0);
  EXPECT_EQ(slurp(hosts()), before);
}

TEST_F(makehosts_test, new_file_long_first_domain_on_aliases_and_others_first) {
  ASSERT_EQ(run("chdef n1 hostnames=a1,a2").rc, 0);
  auto made = [&](const std::string& opts) {
    auto r = run("makehosts " + opts);
    EXPECT_EQ(r.rc, 0) << opts << ": " << r.err;
    return slurp(hosts());
  };
  EXPECT_EQ(made("-n n1"), "127.0.0.1 localhost\n"
                           "10.0.0.1 n1 n1.ten.local a1 a2\n"
                           "10.0.1.1 n1-bmc n1-bmc.ten.local \n"
                           "10.1.0.1 n1-ib0 n1-ib0.cluster.local n1-ibalias\n");
  EXPECT_EQ(made("-n -l n1"), "127.0.0.1 localhost\n"
                              "10.0.0.1 n1.ten.local n1 a1 a2\n"
                              "10.0.1.1 n1-bmc.ten.local n1-bmc \n"
                              "10.1.0.1 n1-ib0.cluster.local n1-ib0 n1-ibalias\n");
  // -a: hosts.pm puts each domain alias in front of the ones before it
  EXPECT_EQ(made("-n -a n1"),
            "127.0.0.1 localhost\n"
            "10.0.0.1 n1 n1.ten.local a2.ten.local a1.ten.local a1 a2\n"
            "10.0.1.1 n1-bmc n1-bmc.ten.local \n"
            "10.1.0.1 n1-ib0 n1-ib0.cluster.local n1-ibalias.cluster.local n1-ibalias\n");
  EXPECT_EQ(made("-n -o n1"), "127.0.0.1 localhost\n"
                              "10.0.0.1 a1 a2 n1.ten.local n1\n"
                              "10.0.1.1  n1-bmc.ten.local n1-bmc\n"
                              "10.1.0.1 n1-ibalias n1-ib0.cluster.local n1-ib0\n");
  // site.FQDNfirst is -l
  ASSERT_EQ(run("chdef -t site clustersite FQDNfirst=yes").rc, 0);
  EXPECT_EQ(made("-n n2"), "127.0.0.1 localhost\n192.168.0.2 n2.cluster.local n2 \n");
  ASSERT_EQ(run("chdef -t site clustersite FQDNfirst=").rc, 0);
}

TEST_F(makehosts_test, d_removes_the_nodes_lines_and_without_a_noderange_changes_nothing) {
  ASSERT_EQ(run("makehosts").rc, 0);
  ASSERT_EQ(run("makehosts -d n1,n4").rc, 0);
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n"
                            "::1 localhost ip6-localhost\n"
                            "# comment\n"
                            "192.168.50.5 printer\n"
                            "10.0.0.3 n3 n3.ten.local \n"
                            "192.168.0.2 n2 n2.cluster.local \n");
  auto before = slurp(hosts());
  auto ino = inode(hosts());
  auto r = run("makehosts -d");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(slurp(hosts()), before);
  EXPECT_EQ(inode(hosts()), ino); // not even rewritten
}

TEST_F(makehosts_test, xcats_messages_and_exit_codes_for_nodes_it_cannot_write) {
  ASSERT_EQ(run("mkdef n5 groups=all hostnames=n5-x").rc, 0);
  // every node: a hosts entry without an address is an error (exit 1), the file still written
  auto r = run("makehosts");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Invalid IP Addr '' for node 'n5'.\n");
  EXPECT_NE(slurp(hosts()).find("10.0.0.4 n4 n4.ten.local \n"), std::string::npos);
  // a noderange: a warning, exit 0 (xCAT would look the name up; clusterws does not)
  r = run("makehosts n5,n6");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "Warning: Ignoring node 'n5', it can not be resolved.\n"
                   "Warning: Ignoring node 'n6', it can not be resolved.\n");
  ASSERT_EQ(run("chdef n6 ip=10.0.0.300").rc, 0);
  r = run("makehosts n6");
  EXPECT_EQ(r.err, "Warning: Ignoring node 'n6', its ip address '10.0.0.300' is not valid.\n");
  // no domain anywhere: the node is skipped with xCAT's warning
  ASSERT_EQ(run("chdef -t site clustersite domain=").rc, 0);
  r = run("makehosts -n n2");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "Warning: No domain can be determined for node 'n2'. The domain of the xCAT "
                   "node must be provided in an xCAT network definition or the xCAT site "
                   "definition.\n");
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n");
  // a short name with a dot
  ASSERT_EQ(run("chdef -t site clustersite domain=cluster.local").rc, 0);
  ASSERT_EQ(run("mkdef n7.x groups=all ip=10.0.0.7").rc, 0);
  r = run("makehosts n7.x");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Invalid short node name 'n7.x'. The short node name may not contain a "
                   "dot. The short node name is considered to be anything preceeding the network "
                   "domain name in the fully qualified node name 'n7.x.ten.local'.\n");
  run("rmdef n7.x");
}

TEST_F(makehosts_test, nics_prefixes_networks_aliases_and_their_messages) {
  for (const char* cmd : {
         "mkdef -t network dmz net=172.16.0.0 mask=255.255.0.0",
         "mkdef -t network named net=192.168.99.0 mask=255.255.255.0 domain=named.local",
         "mkdef m1 groups=all ip=10.0.0.1 'nicips=ib0!10.1.0.1,eth1!172.16.0.1,eth2!192.168.50.1' "
         "'nichostnameprefixes=eth1!p-' 'nicnetworks=eth2!named,ib0!named' "
         "'nicaliases=eth1!al1|al2'",
       }) {
    auto r = run(cmd);
    ASSERT_EQ(r.rc, 0) << cmd << ": " << r.err;
  }
  auto r = run("makehosts -n m1");
  EXPECT_EQ(r.rc, 0) << r.err;
  // the domain of the address's network (ib has none), else of the network nicnetworks
  // names, else the site's; a prefix replaces the default suffix; one alias per address
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n"
                            "10.0.0.1 m1 m1.ten.local \n"
                            "10.1.0.1 m1-ib0 m1-ib0.named.local \n"
                            "172.16.0.1 p-m1 p-m1.cluster.local al1\n"
                            "192.168.50.1 m1-eth2 m1-eth2.named.local \n");
  // a named network that is not the address's: xCAT's warning, exit 0
  ASSERT_EQ(run("chdef -t network ib domain=ib.local").rc, 0);
  r = run("makehosts -n m1");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "Warning: The xCAT network name listed for\n'm1-ib0' is 'named' however the "
                   "nic IP address '10.1.0.1' seems to be in the 'ib' network.\nIf there is an "
                   "error then makes corrections to the database definitions and re-run this "
                   "command.\n");
  // a suffix with a dot: xCAT's error, exit 1
  ASSERT_EQ(run("chdef m1 'nichostnamesuffixes=eth2!.x'").rc, 0);
  r = run("makehosts -n m1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: m1: the value '.x' of nics.nichostnamesuffixes.eth2 should not "
                       "contain dot.\n"),
            std::string::npos)
    << r.err;
  // -d removes every line of the node, its nics' too
  ASSERT_EQ(run("chdef m1 nichostnamesuffixes=").rc, 0);
  ASSERT_EQ(run("makehosts -n m1").rc, 0);
  ASSERT_EQ(run("makehosts -d m1").rc, 0);
  EXPECT_EQ(slurp(hosts()), "127.0.0.1 localhost\n");
  run("rmdef m1");
  run("rmdef -t network dmz,named");
}

TEST_F(makehosts_test, dry_run_prints_the_diff_and_writes_nothing) {
  auto ino = inode(hosts());
  auto r = run("makehosts --dry-run n4");
  EXPECT_EQ(r.rc, 0) << r.err;
  auto p = hosts().string();
  EXPECT_EQ(r.out, "--- " + p + "\n+++ " + p
                     + "\n@@ -5,3 +5,6 @@\n 10.0.0.3 stale-name\n 10.0.0.1 n1-old\n 10.9.9.9 n2\n"
                       "+10.0.0.4 n4 n4.ten.local \n+10.2.0.4 n4-e1 n4-e1.cluster.local \n"
                       "+10.2.0.14 n4-e1b n4-e1b.cluster.local \n");
  EXPECT_EQ(slurp(hosts()), foreign);
  EXPECT_EQ(inode(hosts()), ino);
}

TEST_F(makehosts_test, replaces_the_file_atomically_and_leaves_no_temporary) {
  auto ino = inode(hosts());
  ASSERT_EQ(::chmod(hosts().c_str(), 0640), 0);
  ASSERT_EQ(run("makehosts").rc, 0);
  EXPECT_NE(inode(hosts()), ino); // a new file renamed over the old one, never written in place
  struct stat st {};
  ASSERT_EQ(::stat(hosts().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(std::distance(fs::directory_iterator(hosts().parent_path()), fs::directory_iterator()),
            1);
}

TEST_F(makehosts_test, a_failed_write_leaves_the_old_file) {
  // 200 nodes make a file of more than 1 KiB; the file size limit (ulimit -f 1) makes the
  // write fail with EFBIG
  ASSERT_EQ(run("mkdef n[100-299] groups=all ip='|n(\\d+)|10.0.1.($1-100)|'").rc, 0);
  auto r = run("sh -c \"trap '' XFSZ; ulimit -f 1; exec makehosts\"");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("Error: cannot write " + hosts().string() + ": File too large", 0), 0u)
    << r.err;
  EXPECT_EQ(slurp(hosts()), foreign);
  EXPECT_EQ(std::distance(fs::directory_iterator(hosts().parent_path()), fs::directory_iterator()),
            1);
  run("rmdef n[100-299]");
}

TEST_F(makehosts_test, a_hosts_file_over_its_limit_is_refused_and_kept) {
  std::string big = foreign + std::string(2000, '#') + "\n";
  write_hosts(big);
  auto r = run("sh -c \"echo 'hosts_file_max_bytes = 1024' >>'"
               + (home() / "clusterws.conf").string() + "'\"");
  ASSERT_EQ(r.rc, 0);
  r = run("makehosts");
  // restore the limit before any assertion can end the test
  auto conf = slurp(home() / "clusterws.conf");
  std::ofstream{home() / "clusterws.conf", std::ios::trunc}
    << conf.substr(0, conf.rfind("hosts_file_max_bytes"));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Error: Cannot read " + hosts().string() + ": File too large\n");
  EXPECT_EQ(slurp(hosts()), big);
}

TEST_F(makehosts_test, m_is_refused_with_a_clear_error) {
  auto r = run("makehosts -m");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("-m (link-local addresses from MACs) is not supported"), std::string::npos);
  EXPECT_EQ(slurp(hosts()), foreign);
}

} // namespace
