// nodeset end to end: the built tool against a temporary home, output compared as text with
// xCAT's (destiny.pm's words), and the store read back.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "store/database.hpp"

namespace {

using result = cws::test::tool_output;
using cws::test::slurp;

class nodeset_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    home_ = new cws::test::temp_dir;
    auto r = run("clusterctl init --admin-password adminpw");
    ASSERT_EQ(r.rc, 0) << r.err;
  }

  static void TearDownTestSuite() {
    delete home_;
  }

  void SetUp() override {
    run("rmdef all");
    run("rmdef -t osimage -o rocky9-x86_64-netboot-compute");
    run("rmdef -t osimage -o bare");
    ASSERT_EQ(run("mkdef -f -t osimage -o debian12-x86_64-install-compute imagetype=linux "
                  "provmethod=install osname=Linux osvers=debian12 osarch=x86_64 profile=compute "
                  "pkgdir=/usr/lib/debian-installer/images/12/amd64/text")
                .rc,
              0);
  }

  static result run(const std::string& cmd) {
    return cws::test::run_tool_streams(home_->path, cmd);
  }

  static uint64_t generation() {
    cws::store::database db{home_->path / "db"};
    return db.read().generation();
  }

  static cws::test::temp_dir* home_;
};

cws::test::temp_dir* nodeset_test::home_ = nullptr;

TEST_F(nodeset_test, osimage_sets_the_chain_and_nodetype_in_xcats_words) {
  ASSERT_EQ(run("mkdef -t node n[1-3] groups=compute,all mgt=kvm").rc, 0);
  auto r = run("nodeset compute osimage=debian12-x86_64-install-compute");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "n1: install debian12-x86_64-compute\n"
                   "n2: install debian12-x86_64-compute\n"
                   "n3: install debian12-x86_64-compute\n");
  EXPECT_EQ(run("lsdef n2 -i currstate,currchain,os,arch,profile,provmethod -c").out,
            "n2: arch=x86_64\n"
            "n2: currchain=boot\n"
            "n2: currstate=install debian12-x86_64-compute\n"
            "n2: os=debian12\n"
            "n2: profile=compute\n"
            "n2: provmethod=debian12-x86_64-install-compute\n");
  r = run("nodeset n[1-2] stat");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "n1: install debian12-x86_64-compute\nn2: install debian12-x86_64-compute\n");
  // `osimage` alone: each node's nodetype.provmethod
  ASSERT_EQ(run("nodeset n3 boot").rc, 0);
  EXPECT_EQ(run("nodeset n3 stat").out, "n3: boot\n");
  r = run("nodeset n3 osimage");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "n3: install debian12-x86_64-compute\n");
}

TEST_F(nodeset_test, next_boot_offline_and_shell_move_the_state_as_destiny_does) {
  ASSERT_EQ(run("mkdef -t node n1 groups=compute,all arch=x86_64").rc, 0);
  EXPECT_EQ(run("nodeset n1 stat").out, "n1: offline\n"); // never set: no boot script
  ASSERT_EQ(run("nodeset n1 osimage=debian12-x86_64-install-compute").rc, 0);
  // the node's `next` after its install: currchain's first state, which sticks
  auto r = run("nodeset n1 next");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "n1: boot\n");
  EXPECT_EQ(run("lsdef n1 -i currstate,currchain,provmethod -c").out,
            "n1: currchain=boot\nn1: currstate=boot\n"
            "n1: provmethod=debian12-x86_64-install-compute\n"); // an install image stays
  ASSERT_EQ(run("chdef n1 currchain=shell,boot").rc, 0);
  EXPECT_EQ(run("nodeset n1 next").out, "n1: shell\n");
  EXPECT_EQ(run("lsdef n1 -i currchain -c").out, "n1: currchain=boot\n");
  EXPECT_EQ(run("nodeset n1 offline").out, "n1: offline\n");
  EXPECT_EQ(run("nodeset n1 stat").out, "n1: offline\n");
  // boot after a diskless image blanks provmethod (destiny.pm)
  ASSERT_EQ(run("mkdef -t osimage -o rocky9-x86_64-netboot-compute provmethod=netboot "
                "osvers=rocky9 osarch=x86_64 profile=compute")
              .rc,
            0);
  ASSERT_EQ(run("chdef n1 provmethod=rocky9-x86_64-netboot-compute").rc, 0);
  EXPECT_EQ(run("nodeset n1 boot").out, "n1: boot\n");
  EXPECT_EQ(run("lsdef n1 -i provmethod -c").out, "n1: provmethod=\n");
}

TEST_F(nodeset_test, a_diskless_image_is_refused_in_xcats_words_or_clusterws_own) {
  ASSERT_EQ(run("mkdef -t node n1 groups=compute,all").rc, 0);
  auto dir = home_->path / "netboot-image";
  ASSERT_EQ(run("mkdef -t osimage -o rocky9-x86_64-netboot-compute provmethod=netboot "
                "osvers=rocky9 osarch=x86_64 profile=compute rootimgdir="
                + dir.string())
              .rc,
            0);
  auto before = generation();
  // not generated: xCAT's words (anaconda.pm mknetboot)
  auto r = run("nodeset n1 osimage=rocky9-x86_64-netboot-compute");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: n1: Did you run \"genimage\" before running \"packimage\"? "
                       "kernel cannot be found at "
                       + dir.string() + "/kernel on "),
            std::string::npos)
    << r.err;
  // generated (by xCAT): clusterws does not serve it, and says so
  std::filesystem::create_directories(dir);
  std::ofstream{dir / "kernel"} << "k";
  r = run("nodeset n1 osimage=rocky9-x86_64-netboot-compute");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: n1: osimage rocky9-x86_64-netboot-compute has provmethod netboot: "
                       "clusterws does not serve diskless (netboot, statelite) images"),
            std::string::npos)
    << r.err;
  ASSERT_EQ(run("chdef -t osimage -o rocky9-x86_64-netboot-compute provmethod=statelite").rc, 0);
  before = generation();
  std::filesystem::remove(dir / "kernel");
  r = run("nodeset n1 osimage=rocky9-x86_64-netboot-compute");
  EXPECT_NE(r.err.find("before running \"liteimg\"?"), std::string::npos) << r.err;
  EXPECT_EQ(generation(), before);
  EXPECT_EQ(run("nodeset n1 stat").out, "n1: offline\n");
}

TEST_F(nodeset_test, the_xnba_mirror_is_written_after_the_commit_and_shown_by_dry_run) {
  auto tftp = home_->path / "tftp-mirror";
  auto conf = home_->path / "clusterws.conf";
  auto saved = slurp(conf);
  // this test's settings only (the suite shares the home)
  struct restore {
    std::filesystem::path path;
    std::string text;
    ~restore() {
      std::ofstream{path, std::ios::trunc} << text;
    }
  } restore_conf{conf, saved};
  std::ofstream{conf, std::ios::app} << "xnba_mirror = on\ntftp_root = " << tftp.string()
                                     << "\nboot_listen = 10.0.0.1:8080\n";
  ASSERT_EQ(run("mkdef -t node n1 groups=compute,all mac=52:54:00:00:00:01").rc, 0);
  auto file = tftp / "xcat/xnba/nodes/n1";
  auto r = run("nodeset n1 osimage=debian12-x86_64-install-compute --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("+++ " + file.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+#install debian12-x86_64-compute"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+imgfetch -n kernel http://${next-server}:8080/boot/node/n1/kernel"),
            std::string::npos)
    << r.out;
  EXPECT_FALSE(std::filesystem::exists(tftp));
  EXPECT_EQ(run("nodeset n1 stat").out, "n1: offline\n"); // (the dry run wrote nothing)
  r = run("nodeset n1 osimage=debian12-x86_64-install-compute");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(slurp(file).substr(0, 40), "#!gpxe\n#install debian12-x86_64-compute\n");
  EXPECT_TRUE(std::filesystem::exists(tftp / "xcat/xnba/nodes/n1.uefi"));
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::others_read);
  ASSERT_EQ(run("nodeset n1 boot").rc, 0);
  EXPECT_EQ(slurp(file), "#!gpxe\n#boot\nexit\n");
  r = run("nodeset n1 offline --dry-run");
  EXPECT_NE(r.out.find("-#boot"), std::string::npos) << r.out;
  ASSERT_EQ(run("nodeset n1 offline").rc, 0);
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(tftp / "xcat/xnba/nodes/n1.uefi"));
}

TEST_F(nodeset_test, errors_are_xcats_and_change_nothing) {
  ASSERT_EQ(run("mkdef -t node n[1-2] groups=compute,all").rc, 0);
  ASSERT_EQ(run("nodeset n1 osimage=debian12-x86_64-install-compute").rc, 0);
  auto before = generation();
  auto refused = [&](const std::string& cmd, const std::string& error) {
    auto r = run(cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_NE(r.err.find(error), std::string::npos) << cmd << ": " << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  };
  refused("nodeset compute osimage=nosuch",
          "Error: Cannot find the OS image nosuch on the osimage table.");
  // n2 has no osimage: the whole range is refused, n1 included
  refused("nodeset compute osimage", "Error: n2: OS image name must be specified.");
  ASSERT_EQ(run("mkdef -t osimage -o bare osvers=debian12").rc, 0);
  before = generation();
  refused("nodeset compute osimage=bare", "Error: osimage.provmethod for bare must be set.");
  refused("nodeset compute frobnicate", "Error: Unknown state frobnicate requested");
  refused("nodeset compute", "Usage: nodeset <noderange>");
  refused("nodeset n1,n9 boot", "Invalid nodes and/or groups in noderange: n9");
  refused("nodeset n2 shell", "Error: No archictecture defined in nodetype table for n2");
  refused("nodeset n2 next", "n2: no path in chain.currchain or chain.chain");
  EXPECT_EQ(generation(), before);
  EXPECT_EQ(run("nodeset compute stat").out, "n1: install debian12-x86_64-compute\nn2: offline\n");
}

TEST_F(nodeset_test, many_nodes_are_one_transaction) {
  ASSERT_EQ(run("mkdef -t node node[0001-2000] groups=compute,all").rc, 0);
  auto before = generation();
  auto r = run("nodeset compute osimage=debian12-x86_64-install-compute");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(generation(), before + 1); // one commit for 2,000 nodes
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2000);
  // the same again writes nothing
  r = run("nodeset compute osimage=debian12-x86_64-install-compute");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(run("nodeset node2000 stat").out, "node2000: install debian12-x86_64-compute\n");
}

} // namespace

namespace {

TEST_F(nodeset_test, dry_run_prints_each_nodes_change_and_token_and_writes_nothing) {
  ASSERT_EQ(run("mkdef -t node dr[1-2] groups=compute,all mgt=kvm").rc, 0);
  ASSERT_EQ(run("nodeset dr2 osimage=debian12-x86_64-install-compute").rc, 0);
  auto before = generation();
  auto r = run("nodeset dr1,dr2 osimage=debian12-x86_64-install-compute --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "--- dr1 (store)\n"
                   "+++ dr1 (nodeset)\n"
                   "@@ -0,0 +1,6 @@\n"
                   "+nodetype.provmethod=debian12-x86_64-install-compute\n"
                   "+nodetype.profile=compute\n"
                   "+nodetype.os=debian12\n"
                   "+nodetype.arch=x86_64\n"
                   "+chain.currstate=install debian12-x86_64-compute\n"
                   "+chain.currchain=boot\n"
                   "would arm the install token of dr1\n"
                   "dr2: unchanged\n"
                   "would arm the install token of dr2\n");
  EXPECT_EQ(generation(), before); // nothing written
  EXPECT_EQ(run("nodeset dr1 stat").out, "dr1: offline\n");
  // boot ends dr2's armed token; dr1 has none to end
  r = run("nodeset dr1,dr2 boot --dry-run");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "--- dr1 (store)\n"
                   "+++ dr1 (nodeset)\n"
                   "@@ -0,0 +1 @@\n"
                   "+chain.currstate=boot\n"
                   "--- dr2 (store)\n"
                   "+++ dr2 (nodeset)\n"
                   "@@ -1 +1 @@\n"
                   "-chain.currstate=install debian12-x86_64-compute\n"
                   "+chain.currstate=boot\n"
                   "would end the install token of dr2\n");
  EXPECT_EQ(generation(), before);
  // the same errors as nodeset, nothing written
  r = run("nodeset dr1 osimage=nosuch --dry-run");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Cannot find the OS image nosuch on the osimage table."), std::string::npos)
    << r.err;
  EXPECT_EQ(generation(), before);
}

} // namespace
