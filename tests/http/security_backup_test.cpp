// Issue #27, N6, N7, N8, N12: clusterctl backup and restore against planted links and bad
// backups, and the audit log on a full filesystem (docs/security.md).

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"

namespace {

namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) {
    return 0;
  }
  return st.st_mode & 07777;
}

/// A home with two nodes and its backup at `backup`.
void home_and_backup(const fs::path& home, const fs::path& backup) {
  ASSERT_EQ(cws::test::run_tool(home, "clusterctl init --admin-password pw").rc, 0);
  ASSERT_EQ(cws::test::run_tool(home, "mkdef 'b[1-2]' groups=all").rc, 0);
  auto r = cws::test::run_tool(home, "clusterctl backup '" + backup.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
}

// N6: a link in a backup that points elsewhere once restored (relative) had the mode of what
// it points to in the backup applied through it: a root 0600 file outside the home became 4777
TEST(security_backup, restore_refuses_a_link_and_changes_nothing_through_it) {
  cws::test::temp_dir dir;
  auto bk = dir.path / "a" / "bk";
  fs::create_directories(dir.path / "a");
  home_and_backup(dir.path / "home", bk);
  std::ofstream{dir.path / "victim"} << "root's";
  fs::permissions(dir.path / "victim", fs::perms::owner_read | fs::perms::owner_write);
  std::ofstream{dir.path / "a" / "victim"} << "the attacker's";
  ASSERT_EQ(::chmod((dir.path / "a" / "victim").c_str(), 04777), 0);
  // in the backup ../../victim is a/victim (4777); restored into h/, it is the 0600 victim
  fs::create_symlink("../../victim", bk / "pki" / "evil");
  auto h = dir.path / "h";
  auto r = cws::test::run_tool(h, "clusterctl restore '" + bk.string() + "'");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("pki/evil' is a symbolic link"), std::string::npos) << r.out;
  EXPECT_EQ(mode_of(dir.path / "victim"), 0600u);
  EXPECT_EQ(cws::test::slurp(dir.path / "victim"), "root's");
  EXPECT_FALSE(fs::exists(h / "db" / "data.mdb"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(h / "pki" / "evil")));
  // a FIFO is refused the same way (and does not stall the restore)
  fs::remove(bk / "pki" / "evil");
  ASSERT_EQ(::mkfifo((bk / "ssh" / "fifo").c_str(), 0600), 0);
  r = cws::test::run_tool(h, "clusterctl restore '" + bk.string() + "'");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("ssh/fifo' is a FIFO"), std::string::npos) << r.out;
  fs::remove(bk / "ssh" / "fifo");
  // a set-id regular file is restored without its set-id bit
  std::ofstream{bk / "pki" / "tool"} << "#!/bin/sh\n";
  ASSERT_EQ(::chmod((bk / "pki" / "tool").c_str(), 04755), 0);
  r = cws::test::run_tool(h, "clusterctl restore '" + bk.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(mode_of(h / "pki" / "tool"), 0755u);
  EXPECT_EQ(mode_of(h / "db" / "data.mdb"), 0600u);
  EXPECT_EQ(cws::test::run_tool(h, "nodels").out, "b1\nb2\n");
}

// N7: a backup into a shared directory raced a planted link (the target was checked, then
// created through whatever was there by then), and wrote the database 0644
TEST(security_backup, backup_never_writes_through_a_planted_link_and_is_owner_only) {
  cws::test::temp_dir dir;
  auto home = dir.path / "home";
  ASSERT_EQ(cws::test::run_tool(home, "clusterctl init --admin-password pw").rc, 0);
  auto shared = dir.path / "shared";
  auto victim = dir.path / "victim";
  fs::create_directories(shared);
  fs::create_directories(victim);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  auto target = shared / "bk";
  for (int round = 0; round < 10; ++round) {
    std::atomic<bool> stop{false};
    std::thread racer{[&] {
      while (!stop) {
        ::symlink(victim.c_str(), target.c_str());
        ::usleep(300);
        ::unlink(target.c_str()); // a directory is not unlinked: a backup's stays
        ::usleep(300);
      }
    }};
    auto r = cws::test::run_tool(home, "clusterctl backup '" + target.string() + "'");
    stop = true;
    racer.join();
    EXPECT_TRUE(fs::is_empty(victim)) << "round " << round << ": " << r.out;
    if (r.rc == 0) {
      EXPECT_FALSE(fs::is_symlink(target));
      EXPECT_EQ(mode_of(target), 0700u);
    } else {
      EXPECT_NE(r.out.find("exists; a backup goes into a new directory"), std::string::npos)
        << r.out;
    }
    std::error_code ec;
    fs::remove_all(target, ec);
    fs::remove_all(victim, ec);
    fs::create_directories(victim);
  }
  // the database holds the BMC passwords: 0600 whatever the umask
  auto r = cws::test::run_tool(home, "umask 022; clusterctl backup '" + target.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(mode_of(target), 0700u);
  EXPECT_EQ(mode_of(target / "db"), 0700u);
  EXPECT_EQ(mode_of(target / "db" / "data.mdb"), 0600u);
  EXPECT_EQ(mode_of(target / "MANIFEST"), 0600u);
  // a link already there is never followed, to a directory or to nowhere
  fs::remove_all(target);
  fs::create_directory_symlink(victim, target);
  r = cws::test::run_tool(home, "clusterctl backup '" + target.string() + "'");
  EXPECT_NE(r.rc, 0);
  fs::remove(target);
  fs::create_directory_symlink(victim / "new", target);
  r = cws::test::run_tool(home, "clusterctl backup '" + target.string() + "'");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("exists; a backup goes into a new directory"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(victim));
}

// N12: a restore that failed (a database LMDB cannot read; a configuration with an unknown
// key, restored with rc 0) left half a home that blocked the retry, or every tool
TEST(security_backup, failed_restore_leaves_the_home_as_it_was) {
  cws::test::temp_dir dir;
  auto good = dir.path / "good";
  home_and_backup(dir.path / "home", good);
  auto h = dir.path / "h";
  // a garbage database
  auto garbage = dir.path / "garbage";
  fs::copy(good, garbage, fs::copy_options::recursive);
  fs::remove(garbage / "db" / "data.mdb");
  std::ofstream{garbage / "db" / "data.mdb"} << std::string(65536, 'g');
  auto r = cws::test::run_tool(h, "clusterctl restore '" + garbage.string() + "'");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("The backup's database cannot be read"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was restored"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(h)) << "the home it created is gone again";
  // a configuration the daemon (and every tool) would refuse
  auto badconf = dir.path / "badconf";
  fs::copy(good, badconf, fs::copy_options::recursive);
  std::ofstream{badconf / "clusterws.conf", std::ios::app} << "no_such_key = 1\n";
  fs::create_directories(h);
  r = cws::test::run_tool(h, "clusterctl restore '" + badconf.string() + "'");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("clusterws.conf is refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no_such_key"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(h)) << "an existing empty home stays, empty";
  // the retry with a good backup works, and the tools with it
  r = cws::test::run_tool(h, "clusterctl restore '" + good.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(cws::test::run_tool(h, "nodels").out, "b1\nb2\n");
  // a bad MANIFEST: a clear refusal naming the line
  std::ofstream{good / "MANIFEST", std::ios::app} << "format.version=1\n";
  r = cws::test::run_tool(dir.path / "h2", "clusterctl restore '" + good.string() + "'");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("is not a clusterws backup (MANIFEST line 6: 'format.version' given twice)"),
            std::string::npos)
    << r.out;
  EXPECT_FALSE(fs::exists(dir.path / "h2"));
}

} // namespace
