// clusterctl sn sync NAME against a real sshd on 127.0.0.1 standing in for the service node's
// host (docs/service-nodes.md, "SSH keys"): each existing user's key goes to
// <service node home>/ssh/<user>/ over SSH as root, directories 0700, files 0600, each file
// renamed into place (a key there before is replaced whole, no temporary left behind); key
// directories of users the head does not have are left out; --dry-run copies nothing; a
// service node the head does not know, or a host without the service node's home, is refused.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::run_tool;
using cws::test::run_tool_streams;
using cws::test::slurp;
namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

class sn_sync_test : public ::testing::Test {
 protected:
  void SetUp() override {
    run_tool(home, "clusterctl init --no-networks --admin-password pw");
    ASSERT_TRUE(fs::exists(home / "ssh" / "root" / "id_ed25519"));
    ASSERT_EQ(run_tool(home, "clusterctl sn init").rc, 0);
    auto r = run_tool(home, "clusterctl sn add sn1 --head 127.0.0.1:7311 --out "
                              + (dir.path / "out").string());
    ASSERT_EQ(r.rc, 0) << r.out;
    // alice: an API user with a key; ghost: a key and no such user
    ASSERT_EQ(run_tool(home, "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
    cws::test::make_key(home / "ssh" / "alice" / "id_ed25519");
    cws::test::make_key(home / "ssh" / "cwsghost9" / "id_ed25519");
    // the service node's host: an sshd root logs in to with the head's root key
    host.authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
    host.start();
    r = run_tool(home,
                 "mkdef sn1 groups=service ip=127.0.0.1 sshport=" + std::to_string(host.port()));
    ASSERT_EQ(r.rc, 0) << r.out;
    fs::create_directories(remote);
    fs::permissions(remote, fs::perms::owner_all);
  }

  void TearDown() override {
    host.stop();
  }

  std::string sync(const std::string& extra = {}) {
    return "clusterctl sn sync sn1 --remote-home " + remote.string() + extra;
  }

  cws::test::temp_dir dir;
  fs::path home = dir.path / "head";
  fs::path remote = dir.path / "snhost" / "var-lib-clusterws-sn";
  cws::test::sshd host{dir.path / "sshd"};
};

TEST_F(sn_sync_test, each_users_key_reaches_the_service_nodes_home_0600_in_0700_directories) {
  // a key of alice's there before: replaced whole
  fs::create_directories(remote / "ssh" / "alice");
  std::ofstream{remote / "ssh" / "alice" / "id_ed25519"} << "an old key\n";
  auto r = run_tool_streams(home, sync());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Copied the SSH keys of 2 user(s) (alice,root) to sn1 (127.0.0.1 port "),
            std::string::npos)
    << r.out;
  EXPECT_NE(r.err.find("Skipped cwsghost9: no API user or Unix account 'cwsghost9'"),
            std::string::npos)
    << r.err;
  for (const char* user : {"root", "alice"}) {
    for (const char* f : {"id_ed25519", "id_ed25519.pub"}) {
      auto there = remote / "ssh" / user / f;
      ASSERT_TRUE(fs::exists(there)) << there;
      EXPECT_EQ(slurp(there), slurp(home / "ssh" / user / f)) << there;
      EXPECT_EQ(mode_of(there), 0600u) << there;
    }
    EXPECT_EQ(mode_of(remote / "ssh" / user), 0700u) << user;
    // written under temporary names and renamed: nothing else is left there
    size_t entries = 0;
    for (auto& e : fs::directory_iterator(remote / "ssh" / user)) {
      (void)e;
      ++entries;
    }
    EXPECT_EQ(entries, 2u) << user;
  }
  EXPECT_EQ(mode_of(remote / "ssh"), 0700u);
  EXPECT_FALSE(fs::exists(remote / "ssh" / "cwsghost9"));
  // again: the same, nothing doubled
  r = run_tool_streams(home, sync());
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(slurp(remote / "ssh" / "alice" / "id_ed25519"),
            slurp(home / "ssh" / "alice" / "id_ed25519"));
}

TEST_F(sn_sync_test, dry_run_lists_what_would_go_and_copies_nothing) {
  auto r = run_tool_streams(home, sync(" --dry-run"));
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Would copy to sn1 (127.0.0.1 port " + std::to_string(host.port())
                       + ") as root, below " + remote.string()),
            std::string::npos)
    << r.out;
  for (const char* f : {"ssh/alice/id_ed25519 (0600)", "ssh/alice/id_ed25519.pub (0600)",
                        "ssh/root/id_ed25519 (0600)"}) {
    EXPECT_NE(r.out.find(f), std::string::npos) << f << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("cwsghost9"), std::string::npos);
  EXPECT_FALSE(fs::exists(remote / "ssh"));
  EXPECT_EQ(host.logins(), 0);
}

TEST_F(sn_sync_test, a_host_without_the_service_nodes_home_or_an_unknown_name_is_refused) {
  auto r = run_tool_streams(home, "clusterctl sn sync sn1 --remote-home "
                                    + (dir.path / "nowhere").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Error: sn1: no service-node home " + (dir.path / "nowhere").string()),
            std::string::npos)
    << r.err;
  EXPECT_FALSE(fs::exists(dir.path / "nowhere"));
  r = run_tool_streams(home, "clusterctl sn sync sn2 --remote-home " + remote.string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("no service node 'sn2'"), std::string::npos) << r.err;
  r = run_tool_streams(home, "clusterctl sn sync sn1 --remote-home relative/dir");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("is no absolute path"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(remote / "ssh"));
}

} // namespace
