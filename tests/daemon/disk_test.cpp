// A full disk under the daemon: the home on a small tmpfs, node writes until the disk is full.
// The write that does not fit gets a clear error, every acknowledged write stays whole, reads
// go on, writes work again once there is room, and the store opens cleanly after a kill.

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <sys/mount.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

/// A tmpfs of `mib` MiB at `dir`, unmounted when done; `ok` is false where mounting is not
/// allowed (not root, or no CAP_SYS_ADMIN in a container).
struct small_disk {
  small_disk(const std::filesystem::path& dir, int mib) : dir_(dir) {
    std::filesystem::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + std::to_string(mib) + "m").c_str())
         == 0;
  }
  ~small_disk() {
    if (ok) {
      ::umount2(dir_.c_str(), MNT_DETACH);
    }
  }
  bool resize(int mib) {
    return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT,
                   ("size=" + std::to_string(mib) + "m").c_str())
           == 0;
  }
  bool ok = false;

 private:
  std::filesystem::path dir_;
};

TEST(disk, full_disk_gives_a_clear_error_and_loses_nothing) {
  cws::test::temp_dir dir;
  small_disk disk{dir.path / "disk", 24};
  if (!disk.ok) {
    GTEST_SKIP() << "mounting a tmpfs needs root (CAP_SYS_ADMIN)";
  }
  cws::test::daemon d{dir.path / "disk" / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app} << "audit_log = off\n";
  d.start();
  cws::test::https_client client{d.ca(), d.port()};
  std::string big(200000, 'x');
  std::map<std::string, std::string> acked;
  cws::test::reply refused;
  for (int i = 0; i < 1000 && refused.status == 0; ++i) {
    auto name = "full" + std::to_string(i);
    auto comment = std::to_string(i) + big;
    auto r = client.request("PUT", d.url("/nodes/" + name),
                            "{\"groups\":\"disk\",\"usercomment\":\"" + comment + "\"}");
    if (r.status == 200) {
      acked[name] = comment;
    } else {
      refused = r;
      refused.body += " (" + name + ")";
    }
  }
  ASSERT_NE(refused.status, 0u) << "the disk never filled up";
  EXPECT_GT(acked.size(), 10u);
  EXPECT_EQ(refused.status, 503u) << refused.body;
  EXPECT_NE(refused.body.find("commit: no space left on device ("), std::string::npos)
    << refused.body;
  EXPECT_NE(refused.body.find("); nothing was written"), std::string::npos) << refused.body;
  // the error log says so: the failed commit and the 503 it caused (never the body)
  auto log = cws::test::slurp(d.log());
  EXPECT_NE(log.find(" error: store: the commit of "), std::string::npos) << log;
  EXPECT_NE(log.find(" error: answered 503: PUT /clusterws/nodes/full"), std::string::npos) << log;
  EXPECT_EQ(log.find("xxxxxxxx"), std::string::npos);
  EXPECT_EQ(log.find("rootpw"), std::string::npos);
  // reads go on, and the refused node is not there at all
  auto list = client.get(d.url("/nodes/disk/nodels"));
  ASSERT_EQ(list.status, 200u);
  EXPECT_EQ(static_cast<size_t>(std::count(list.body.begin(), list.body.end(), ',')) + 1,
            acked.size());
  // room again: writes work without a restart
  ASSERT_TRUE(disk.resize(64));
  EXPECT_EQ(client.request("PUT", d.url("/nodes/afterroom"), "{\"groups\":\"disk\"}").status, 200u);
  acked["afterroom"] = "";
  // a kill, a restart: every acknowledged write is there and whole
  EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
  d.start();
  cws::test::https_client after{d.ca(), d.port()};
  for (const auto& [name, comment] : acked) {
    auto r = after.get(d.url("/nodes/" + name + "/attrs/usercomment"));
    ASSERT_EQ(r.status, 200u) << name;
    if (!comment.empty()) {
      EXPECT_EQ(r.body, "{\"" + name + "\":{\"usercomment\":\"" + comment + "\"}}\n") << name;
    }
  }
  std::printf("full disk test: %zu writes acknowledged before the disk filled, the next refused "
              "with 503; all read back whole after growing the disk and a kill -9\n",
              acked.size() - 1);
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
