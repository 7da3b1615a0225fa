// Issue #32: clusterctl restore --replace into an initialized home, with the daemon running
// on it (docs/operations.md, "Backup and restore").

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

namespace fs = std::filesystem;

/// The directories `<home>.replaced-*` beside `home`.
std::vector<fs::path> kept_aside(const fs::path& home) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(home.parent_path())) {
    if (e.path().filename().string().rfind(home.filename().string() + ".replaced-", 0) == 0) {
      out.push_back(e.path());
    }
  }
  return out;
}

/// The port in `file` once the daemon wrote it (0 after `secs` seconds).
unsigned short port_in(const fs::path& file, int secs = 20) {
  for (int i = 0; i < secs * 50; ++i) {
    std::ifstream in{file};
    unsigned short port = 0;
    if (in >> port) {
      return port;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

/// A datagram socket standing in for systemd's notify socket: what the daemon sends to it.
class notify_socket {
 public:
  explicit notify_socket(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ~notify_socket() {
    ::close(fd_);
  }
  /// The messages received so far, one per line.
  std::string messages() {
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
      got_.append(buf, static_cast<size_t>(n)).push_back('\n');
    }
    return got_;
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::string got_;
};

TEST(restore_replace, swaps_an_initialized_home_and_the_running_daemon_serves_the_backup) {
  cws::test::temp_dir dir;
  auto home = dir.path / "h";
  cws::test::daemon d{home, "pw"};
  ASSERT_EQ(cws::test::run_tool(home, "mkdef 'keep[1-2]' groups=all").rc, 0);
  notify_socket notify{dir.path / "notify"};
  ::setenv("NOTIFY_SOCKET", (dir.path / "notify").c_str(), 1);
  d.start();
  ::unsetenv("NOTIFY_SOCKET");
  auto bk = dir.path / "bk";
  ASSERT_EQ(cws::test::run_tool(home, "clusterctl backup '" + bk.string() + "'").rc, 0);
  ASSERT_EQ(cws::test::run_tool(home, "mkdef after1 groups=all").rc, 0);

  // without --replace: refused, naming the option; the home as it was
  auto r = cws::test::run_tool(home, "clusterctl restore '" + bk.string() + "'");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("is already initialized; 'clusterctl restore --replace' keeps it aside"),
            std::string::npos)
    << r.out;
  EXPECT_EQ(cws::test::run_tool(home, "nodels").out, "after1\nkeep1\nkeep2\n");

  r = cws::test::run_tool(home, "clusterctl restore --replace '" + bk.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto aside = kept_aside(home);
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(r.out, "Restored 2 nodes from " + bk.string() + " into " + home.string()
                     + "; the home it replaced is " + aside[0].string() + "\nTold clusterwsd (pid "
                     + std::to_string(d.pid()) + ") to reopen the home\n");
  // the tools see the backup; the old home is whole beside it
  EXPECT_EQ(cws::test::run_tool(home, "nodels").out, "keep1\nkeep2\n");
  EXPECT_EQ(cws::test::run_tool(aside[0], "nodels").out, "after1\nkeep1\nkeep2\n");

  // the same daemon process serves the restored database (it listens again: a new port)
  auto port = port_in(home / "port");
  ASSERT_NE(port, 0) << cws::test::slurp(aside[0] / "clusterwsd.log");
  EXPECT_EQ(::kill(d.pid(), 0), 0);
  cws::test::https_client c{home / "pki" / "ca-cert.pem", port};
  auto got = c.get(d.url("/nodes"));
  EXPECT_EQ(got.status, 200u);
  EXPECT_NE(got.body.find("keep1"), std::string::npos) << got.body;
  EXPECT_EQ(got.body.find("after1"), std::string::npos) << got.body;
  // and writes into it, not into the home kept aside
  auto put = c.request("PUT", d.url("/nodes/keep1"), R"({"usercomment":"after restore"})");
  EXPECT_EQ(put.status, 200u) << put.body;
  EXPECT_EQ(cws::test::run_tool(home, "lsdef keep1 -i usercomment -c").out,
            "keep1: usercomment=after restore\n");
  EXPECT_EQ(cws::test::run_tool(aside[0], "lsdef keep1 -i usercomment -c").out,
            "keep1: usercomment=\n");
  EXPECT_NE(cws::test::slurp(aside[0] / "clusterwsd.log").find("was replaced: starting again"),
            std::string::npos);
  // systemd is told of a reload (not a stop), which the second READY=1 ends
  auto said = notify.messages();
  auto ready = said.find("READY=1\n");
  auto reloading = said.find("RELOADING=1\n");
  ASSERT_NE(reloading, std::string::npos) << said;
  EXPECT_LT(ready, reloading) << said;
  EXPECT_NE(said.find("READY=1\n", reloading), std::string::npos) << said;
  EXPECT_EQ(said.find("STOPPING=1"), std::string::npos) << said;
  EXPECT_EQ(d.stop(), 0);
}

TEST(restore_replace, a_refused_backup_leaves_the_initialized_home_as_it_was) {
  cws::test::temp_dir dir;
  auto home = dir.path / "h";
  ASSERT_EQ(cws::test::run_tool(home, "clusterctl init --admin-password pw").rc, 0);
  ASSERT_EQ(cws::test::run_tool(home, "mkdef 'n[1-3]' groups=all").rc, 0);
  auto bk = dir.path / "bk";
  ASSERT_EQ(cws::test::run_tool(home, "clusterctl backup '" + bk.string() + "'").rc, 0);
  std::ofstream{bk / "clusterws.conf", std::ios::app} << "no_such_key = 1\n";
  ASSERT_EQ(cws::test::run_tool(home, "rmdef n3").rc, 0);

  auto r = cws::test::run_tool(home, "clusterctl restore --replace '" + bk.string() + "'");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("clusterws.conf is refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing was restored"), std::string::npos) << r.out;
  EXPECT_TRUE(kept_aside(home).empty()) << "the staged home is gone";
  EXPECT_EQ(cws::test::run_tool(home, "nodels").out, "n1\nn2\n");

  // into a home that is not initialized, --replace restores as without it
  fs::remove(bk / "clusterws.conf");
  r = cws::test::run_tool(dir.path / "fresh", "clusterctl restore --replace '" + bk.string() + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(cws::test::run_tool(dir.path / "fresh", "nodels").out, "n1\nn2\nn3\n");
  EXPECT_TRUE(kept_aside(dir.path / "fresh").empty());
}

} // namespace
