// Issue #27, nodecopy and xdcp (docs/security.md N2, N4, N5, N10, N16): a real daemon, real
// users, a real sshd as the nodes, and a "compromised node": a second sshd whose SFTP server
// is a proxy that rewrites the names it lists.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

namespace fs = std::filesystem;
using cws::test::announced_socket;
using cws::test::as_user;
using cws::test::run_tool;

constexpr const char* owner_user = "cwsn4own";
constexpr const char* reader_user = "cwsn4read";

std::string slurp(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out{p, std::ios::binary};
  out << text;
}

/// The compromised node's SFTP server: OpenSSH's sftp-server behind a proxy that lists the
/// name EMPTY-NAME as an empty name (no real file system has one).
constexpr const char* sftp_proxy = R"PY(import os, struct, subprocess, threading
p = subprocess.Popen(["/usr/lib/openssh/sftp-server"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, bufsize=0)
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            os.close(p.stdin.fileno())
            return
        while b:
            b = b[os.write(p.stdin.fileno(), b):]
threading.Thread(target=up, daemon=True).start()
def readn(n):
    out = b""
    while len(out) < n:
        b = os.read(p.stdout.fileno(), n - len(out))
        if not b:
            return None
        out += b
    return out
def u32(b, o):
    return struct.unpack(">I", b[o:o + 4])[0]
def skip_attrs(b, o):
    flags = u32(b, o); o += 4
    if flags & 1: o += 8
    if flags & 2: o += 8
    if flags & 4: o += 4
    if flags & 8: o += 8
    if flags & 0x80000000:
        n = u32(b, o); o += 4
        for _ in range(2 * n):
            o += 4 + u32(b, o)
    return o
def put(b):
    while b:
        b = b[os.write(1, b):]
while True:
    h = readn(4)
    if h is None:
        break
    body = readn(u32(h, 0))
    if body is None:
        break
    if body[0] == 104:
        out = body[:9]; o = 9
        for _ in range(u32(body, 5)):
            n = u32(body, o); name = body[o + 4:o + 4 + n]; o += 4 + n
            n = u32(body, o); longname = body[o:o + 4 + n]; o += 4 + n
            a = o; o = skip_attrs(body, o)
            if name == b"EMPTY-NAME":
                name = b""
            out += struct.pack(">I", len(name)) + name + longname + body[a:o]
        body = out
    put(struct.pack(">I", len(body)) + body)
)PY";

class security_copy_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    fs::permissions(dir_->path, fs::perms::others_exec, fs::perm_options::add);
    farm_ = new cws::test::sshd(dir_->path / "farm");
    evil_ = new cws::test::sshd(dir_->path / "evil");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    {
      // big sources are streamed by each node, slowly (the swap in N2 lands mid-run); the
      // pull limits are small so that tests reach them
      std::ofstream conf{home / "clusterws.conf", std::ios::app};
      conf << "ssh_connect_timeout = 10\ncopy_memory_max = 65536\ncopy_chunk_bytes = 4096\n"
           << "copy_pull_node_max = 1048576\ncopy_pull_run_max = 3145728\n"
           << "copy_pull_free_min = 1048576\ncopy_files_max = 10000\n";
    }
    auto root_key = home / "ssh" / "root" / "id_ed25519.pub";
    farm_->authorize("root", root_key);
    evil_->authorize("root", root_key);
    {
      // the compromised node answers SFTP through the proxy (a forced command is run for
      // the sftp subsystem too)
      spit(dir_->path / "sftp_proxy.py", sftp_proxy);
      auto keys = dir_->path / "evil" / "authorized" / "root";
      auto key = slurp(keys);
      std::ofstream{keys, std::ios::trunc}
        << "command=\"/usr/bin/python3 " << (dir_->path / "sftp_proxy.py").string() << "\" " << key;
    }
    users_ok_ = cws::test::ensure_user(owner_user) && cws::test::ensure_user(reader_user);
    if (users_ok_) {
      cws::test::make_key(home / "ssh" / reader_user / "id_ed25519");
      farm_->authorize(reader_user, home / "ssh" / reader_user / "id_ed25519.pub");
      run_tool(home,
               std::string{"echo readpw | clusterctl passwd "} + reader_user + " --password-stdin");
      run_tool(home, std::string{"mkdef -t policy -o 6.7 name="} + reader_user
                       + " rule=allow commands=xdcp");
    }
    // a cluster user with no local account
    run_tool(home, "echo ghostpw | clusterctl passwd cwsghost --password-stdin");
    run_tool(home, "mkdef -t policy -o 6.8 name=cwsghost rule=allow commands=xdcp");
    run_tool(home, "mkdef -t group farm sshport=" + std::to_string(farm_->port()));
    auto r = run_tool(home, "mkdef 'sc[01-06]' groups=farm,all ip=127.0.0.1");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(home,
                 "mkdef evil01 groups=all ip=127.0.0.1 sshport=" + std::to_string(evil_->port()));
    ASSERT_EQ(r.rc, 0) << r.out;
    farm_->start();
    evil_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    evil_->stop();
    farm_->stop();
    delete d_;
    delete evil_;
    delete farm_;
    delete dir_;
  }

  void SetUp() override {
    work_ = dir_->path / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(work_);
    fs::permissions(work_, fs::perms(0755));
    got_ = work_ / "got";
    fs::create_directories(got_);
  }

  /// Sets `key` in the home's clusterws.conf for the tools run next (the daemon keeps its own).
  static void set_setting(const std::string& key, const std::string& value) {
    auto conf = d_->home() / "clusterws.conf";
    std::istringstream in{slurp(conf)};
    std::string out;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key + " =", 0) != 0) {
        out += line + '\n';
      }
    }
    std::ofstream{conf, std::ios::trunc} << out << key << " = " << value << '\n';
  }

  static fs::path copy_root() {
    return d_->home() / "copy";
  }

  /// Names in `got_` (the pulled files and anything left behind).
  std::vector<std::string> pulled() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator{got_}) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::string body(const fs::path& src, const fs::path& target) {
    return R"({"src":[")" + src.string() + R"("],"target":")" + target.string() + R"("})";
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::sshd* evil_;
  static cws::test::daemon* d_;
  static bool users_ok_;
  fs::path work_;
  fs::path got_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* security_copy_test::dir_ = nullptr;
cws::test::sshd* security_copy_test::farm_ = nullptr;
cws::test::sshd* security_copy_test::evil_ = nullptr;
cws::test::daemon* security_copy_test::d_ = nullptr;
bool security_copy_test::users_ok_ = false;

// N2: a large source is streamed by each node; once the first node copies, the source is
// swapped for a link to the CA's private key. Every node still gets the file that was
// checked: it is read through the descriptor opened at the check, never by path again.
TEST_F(security_copy_test, n2_a_source_swapped_for_a_link_mid_copy_is_not_followed) {
  auto secret = d_->home() / "pki" / "ca-key.pem";
  ASSERT_TRUE(fs::exists(secret));
  auto src = copy_root() / "n2" / "big";
  std::string content(2 * 1024 * 1024, 'A'); // 512 writes of 4 KiB per node
  spit(src, content);
  auto target = work_ / "big";
  cws::test::reply r;
  std::thread request{[&] {
    cws::test::https_client c{d_->ca(), d_->port()};
    r = c.request("POST", d_->url("/nodes/sc[01-06]/nodecopy", "&fanout=1"), body(src, target));
  }};
  // the first node is writing its temporary (or is done): swap the source for a link while
  // the other nodes have yet to start
  bool started = false;
  for (int i = 0; i < 3000 && !started; ++i) {
    for (const auto& e : fs::directory_iterator{work_}) {
      auto name = e.path().filename().string();
      started = started || name.rfind(".big.cws-", 0) == 0 || name == "big";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(started);
  fs::create_symlink(secret, src.parent_path() / "swap");
  fs::rename(src.parent_path() / "swap", src);
  request.join();
  EXPECT_EQ(r.status, 201u) << r.body;
  auto copied = slurp(target);
  EXPECT_EQ(copied.size(), content.size());
  EXPECT_TRUE(copied == content) << "a node received the link's target";
  EXPECT_EQ(copied.find("PRIVATE KEY"), std::string::npos);
  // a link inside copy_root is never followed, even to a file inside it
  fs::create_symlink(copy_root() / "n2" / "plain", copy_root() / "n2" / "inner-link");
  spit(copy_root() / "n2" / "plain", "p");
  r = client.request("POST", d_->url("/nodes/sc01/nodecopy"),
                     body(copy_root() / "n2" / "inner-link", work_ / "x"));
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("is not inside"), std::string::npos) << r.body;
  EXPECT_FALSE(fs::exists(work_ / "x"));
}

// N4: over the local socket the caller is a Unix user: nodecopy reads its sources with that
// user's rights, so another user's 0600 file is refused (and nothing is copied), while the
// caller's own 0600 file is copied.
TEST_F(security_copy_test, n4_the_local_socket_reads_sources_with_the_callers_rights) {
  if (!users_ok_) {
    GTEST_SKIP() << "needs root to create the test users";
  }
  // getpwnam's answer is overwritten by the next call: the ids are copied
  const auto* pw = getpwnam(owner_user);
  ASSERT_NE(pw, nullptr);
  const passwd own = *pw;
  const auto* owner = &own;
  pw = getpwnam(reader_user);
  ASSERT_NE(pw, nullptr);
  const passwd rd = *pw;
  const auto* reader = &rd;
  auto dir = copy_root() / "n4";
  spit(dir / "theirs", "owner's secret\n");
  spit(dir / "mine", "reader's own\n");
  ASSERT_EQ(::chown((dir / "theirs").c_str(), owner->pw_uid, owner->pw_gid), 0);
  ASSERT_EQ(::chmod((dir / "theirs").c_str(), 0600), 0);
  ASSERT_EQ(::chown((dir / "mine").c_str(), reader->pw_uid, reader->pw_gid), 0);
  ASSERT_EQ(::chmod((dir / "mine").c_str(), 0600), 0);
  auto out = work_ / "out";
  fs::create_directories(out);
  ASSERT_EQ(::chown(out.c_str(), reader->pw_uid, reader->pw_gid), 0);
  auto socket = announced_socket(*d_);
  ASSERT_FALSE(socket.empty());
  auto post = [&](const fs::path& src) {
    return as_user(*d_, reader_user,
                   "curl -s -w ' %{http_code}' -X POST -H 'Content-Type: application/json' "
                   "--unix-socket "
                     + socket + " -d '" + body(src, out)
                     + "' http://localhost/clusterws/nodes/sc01/nodecopy")
      .out;
  };
  auto answer = post(dir / "theirs");
  EXPECT_NE(answer.find(" 400"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Permission denied (read as cwsn4read). Nothing was copied."),
            std::string::npos)
    << answer;
  EXPECT_FALSE(fs::exists(out / "theirs"));
  answer = post(dir / "mine");
  EXPECT_NE(answer.find(" 201"), std::string::npos) << answer;
  EXPECT_EQ(slurp(out / "mine"), "reader's own\n");
  // over HTTPS the same: the cluster user reads as the local account of its name
  auto r = client.request("POST",
                          std::string{"/clusterws/nodes/sc01/nodecopy?userName="} + reader_user
                            + "&userPW=readpw",
                          body(dir / "theirs", out));
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("Permission denied (read as cwsn4read)"), std::string::npos) << r.body;
  // a cluster user without a local account reads as nobody: not even a root-owned 0640 file
  spit(dir / "group-only", "g\n");
  ASSERT_EQ(::chmod((dir / "group-only").c_str(), 0640), 0);
  r = client.request("POST", "/clusterws/nodes/sc01/nodecopy?userName=cwsghost&userPW=ghostpw",
                     body(dir / "group-only", out));
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("Permission denied (read as nobody)"), std::string::npos) << r.body;
  EXPECT_FALSE(fs::exists(out / "theirs"));
  EXPECT_FALSE(fs::exists(out / "group-only"));
  // root (the daemon's own user) still reads everything under copy_root
  r = client.request("POST", d_->url("/nodes/sc01/nodecopy"), body(dir / "theirs", work_));
  EXPECT_EQ(r.status, 201u) << r.body;
}

// N5: a node's setuid file and world-writable directory come masked as OpenSSH's sftp -p
// keeps them: permission bits only, and no directory writable by others.
TEST_F(security_copy_test, n5_pulled_modes_lose_setuid_setgid_sticky_and_world_write) {
  auto node = work_ / "node";
  spit(node / "suid", "#!/bin/sh\n");
  ASSERT_EQ(::chmod((node / "suid").c_str(), 04755), 0);
  spit(node / "open" / "sgid", "x");
  ASSERT_EQ(::chmod((node / "open" / "sgid").c_str(), 02775), 0);
  ASSERT_EQ(::chmod((node / "open").c_str(), 01777), 0);
  auto r
    = run_tool(d_->home(), "xdcp sc01 -p -P " + (node / "suid").string() + " " + got_.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat((got_ / "suid._sc01").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  r = run_tool(d_->home(), "xdcp sc01 -R -p -P " + (node / "open").string() + " " + got_.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  ASSERT_EQ(::stat((got_ / "open._sc01").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  ASSERT_EQ(::stat((got_ / "open._sc01" / "sgid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
}

// N10: an endless file (/dev/zero) stops at copy_pull_node_max with a clear error for the
// node, and nothing is left; the run's total and the free-space reserve hold too.
TEST_F(security_copy_test, n10_pulls_stop_at_the_node_and_run_caps_and_the_free_reserve) {
  auto r = run_tool(d_->home(), "xdcp sc01 -t 30 -P /dev/zero " + got_.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("sc01: /dev/zero: more than 1048576 bytes from this node "
                       "(copy_pull_node_max); nothing was kept"),
            std::string::npos)
    << r.out;
  EXPECT_TRUE(pulled().empty());
  // five nodes of 900 KiB each: past 3 MiB in all, the rest fail
  auto f = work_ / "node" / "log";
  spit(f, std::string(900 * 1024, 'l'));
  r = run_tool(d_->home(), "xdcp 'sc[01-05]' -t 30 -P " + f.string() + " " + got_.string());
  EXPECT_GE(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("(copy_pull_run_max); nothing was kept"), std::string::npos) << r.out;
  auto names = pulled();
  EXPECT_LE(names.size(), 3u);
  for (const auto& n : names) {
    EXPECT_EQ(n.find(".cws-"), std::string::npos) << n; // no partial file left
    EXPECT_EQ(fs::file_size(got_ / n), 900u * 1024) << n;
  }
  // the reserve: a file system never filled below copy_pull_free_min
  set_setting("copy_pull_free_min", "1125899906842624");
  fs::remove_all(got_);
  fs::create_directories(got_);
  r = run_tool(d_->home(), "xdcp sc01 -t 30 -P " + f.string() + " " + got_.string());
  set_setting("copy_pull_free_min", "1048576");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("bytes would stay free (copy_pull_free_min); nothing was kept"),
            std::string::npos)
    << r.out;
  EXPECT_TRUE(pulled().empty());
}

// N16: every entry a node lists counts against copy_files_max, skipped ones too.
TEST_F(security_copy_test, n16_skipped_entries_count_against_copy_files_max) {
  auto tree = work_ / "node" / "t";
  spit(tree / "a", "a");
  spit(tree / "b", "b");
  for (const char* fifo : {"f1", "f2", "f3", "f4"}) {
    ASSERT_EQ(::mkfifo((tree / fifo).c_str(), 0644), 0);
  }
  set_setting("copy_files_max", "4");
  auto r = run_tool(d_->home(), "xdcp sc01 -t 30 -R -P " + tree.string() + " " + got_.string());
  set_setting("copy_files_max", "10000");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("more than 4 files and directories (copy_files_max)"), std::string::npos)
    << r.out;
  EXPECT_TRUE(pulled().empty());
}

// N16: a compromised node lists an empty name: the node fails, and no truncated tree is
// kept as if it were whole.
TEST_F(security_copy_test, n16_an_empty_name_from_a_node_fails_it) {
  if (!fs::exists("/usr/bin/python3") || !fs::exists("/usr/lib/openssh/sftp-server")) {
    GTEST_SKIP() << "the compromised node's SFTP proxy needs python3 and OpenSSH's sftp-server";
  }
  auto tree = work_ / "node" / "t";
  for (const char* name : {"a", "EMPTY-NAME", "m", "z"}) {
    spit(tree / name, name);
  }
  auto r = run_tool(d_->home(), "xdcp evil01 -t 30 -R -P " + tree.string() + " " + got_.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("evil01: " + tree.string() + ": the node listed an empty name"),
            std::string::npos)
    << r.out;
  EXPECT_TRUE(pulled().empty());
  // the proxy itself is sound: a tree without the name comes whole
  fs::remove(tree / "EMPTY-NAME");
  r = run_tool(d_->home(), "xdcp evil01 -t 30 -R -P " + tree.string() + " " + got_.string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(slurp(got_ / "t._evil01" / "z"), "z");
}

} // namespace
