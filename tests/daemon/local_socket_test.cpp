// The local Unix socket (SO_PEERCRED) for users other than root, against a real clusterwsd, the
// loopback sshd and real non-root Unix users: lsdef, nodels and xdsh work for a user policy
// allows and print what root's direct path prints; a user it does not allow gets xCAT's
// message; the other tools say they need root; the socket is 0666, replaced when stale,
// removed at stop; root keeps the direct path.

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::announced_socket;
using cws::test::as_user;
using cws::test::run_tool;

constexpr const char* allowed_user = "cwslocal";
constexpr const char* denied_user = "cwsdenied";
/// A local account that shares the management node's name (the default `trusted` row's).
constexpr const char* host_named_user = "cwsmnhost";

/// A socket file at `path` that nobody accepts on: what a crashed daemon leaves.
void make_stale_socket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  ::close(fd); // the file stays
}

class local_socket_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    users_ok_ = cws::test::ensure_user(allowed_user) && cws::test::ensure_user(denied_user)
                && cws::test::ensure_user(host_named_user);
    auto home = d_->home();
    {
      // listings of more than 5 objects come in pages (chunked): the client's other framing
      std::ofstream conf{home / "clusterws.conf", std::ios::app};
      conf << "page_objects = 5\n";
    }
    if (users_ok_) {
      cws::test::make_key(home / "ssh" / allowed_user / "id_ed25519");
      farm_->authorize(allowed_user, home / "ssh" / allowed_user / "id_ed25519.pub");
    }
    run_tool(home, "mkdef -t group farm sshport=" + std::to_string(farm_->port()));
    auto r = run_tool(home, "mkdef 'ln[01-12]' groups=farm,all ip=127.0.0.1 mgt=kvm os=rhels9 "
                            "postscripts=myscript");
    ASSERT_EQ(r.rc, 0) << r.out;
    run_tool(home, "mkdef lhidden groups=farm hidden=1");
    run_tool(home, "mkdef -t network -o net1 net=10.0.0.0 mask=255.0.0.0");
    run_tool(home, std::string{"mkdef -t policy -o 6 name="} + allowed_user
                     + " rule=allow commands=lsdef,nodels,xdsh");
    farm_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    farm_->stop();
    delete d_;
    delete farm_;
    delete dir_;
  }

  void SetUp() override {
    if (!users_ok_) {
      GTEST_SKIP() << "needs root to create the test users";
    }
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static bool users_ok_;
};

cws::test::temp_dir* local_socket_test::dir_ = nullptr;
cws::test::sshd* local_socket_test::farm_ = nullptr;
cws::test::daemon* local_socket_test::d_ = nullptr;
bool local_socket_test::users_ok_ = false;

TEST_F(local_socket_test, the_socket_is_open_to_local_users_and_only_root_can_replace_it) {
  auto path = announced_socket(*d_);
  ASSERT_FALSE(path.empty()) << cws::test::slurp(d_->log());
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  EXPECT_EQ(st.st_uid, 0u);
  struct stat dir {};
  ASSERT_EQ(::stat(std::filesystem::path{path}.parent_path().c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 0777, 0755u);
  EXPECT_EQ(dir.st_uid, 0u);
  // the user cannot read the store itself: the tools have no other way in
  auto r = as_user(*d_, allowed_user, "ls $CLUSTERWS_HOME/db");
  EXPECT_NE(r.rc, 0);
}

TEST_F(local_socket_test, an_allowed_user_lists_exactly_what_root_lists) {
  for (std::string cmd : {"lsdef",
                          "lsdef ln01",
                          "lsdef -l ln01,ln02",
                          "lsdef -s 'ln[01-03]'",
                          "lsdef ln01 -z",
                          "lsdef -t node -z",
                          "lsdef 'ln[01-03]' -i os,mgt,bmc -c",
                          "lsdef -t network -l",
                          "lsdef -t node,network -l",
                          "lsdef -a",
                          "lsdef -w os==rhels9 -i mgt 'ln[01-02]'",
                          "lsdef ln01,nosuch,ln02",
                          "lsdef ln01 -i nosuchattr",
                          "nodels",
                          "nodels 'ln[01-04]'",
                          "nodels 'ln[01-02]' os",
                          "nodels farm nodehm.mgt groups",
                          "nodels ln01 nodehm",
                          "nodels farm os==rhels9",
                          "nodels ln01,nosuch",
                          "nodels '/ln0[1-3]'",
                          "nodels 'farm,-/ln0[1-9]'",
                          "lsdef '/ln1[0-2]' -i os -c",
                          "lsdef -t osimage"}) {
    auto mine = as_user(*d_, allowed_user, cmd);
    auto root = run_tool(d_->home(), cmd);
    EXPECT_EQ(mine.out, root.out) << cmd;
    EXPECT_EQ(mine.rc, root.rc) << cmd;
  }
  // issue #27 N15: a regex noderange (its '/' sent as %2F) reaches the daemon as written
  auto r = as_user(*d_, allowed_user, "nodels '/ln0[1-3]'");
  EXPECT_EQ(r.out, "ln01\nln02\nln03\n");
  EXPECT_EQ(r.rc, 0);
  r = as_user(*d_, allowed_user, "xdsh '/ln0[12]' id -un");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(std::string{"ln01: "} + allowed_user), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string{"ln02: "} + allowed_user), std::string::npos) << r.out;
  // the listing shows what the daemon holds, hidden nodes left out as root's
  r = as_user(*d_, allowed_user, "lsdef");
  EXPECT_NE(r.out.find("ln12  (node)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("lhidden"), std::string::npos) << r.out;
  r = as_user(*d_, allowed_user, "lsdef ln01 -z");
  EXPECT_NE(r.out.find("    postscripts=myscript\n"), std::string::npos) << r.out;
}

TEST_F(local_socket_test, an_allowed_user_runs_xdsh_as_itself_with_its_own_key) {
  auto r = as_user(*d_, allowed_user, "xdsh ln01,ln02 id -un");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(std::string{"ln01: "} + allowed_user + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string{"ln02: "} + allowed_user + "\n"), std::string::npos) << r.out;
  // a failing command: its stderr and exit status count as on the direct path
  r = as_user(*d_, allowed_user, "xdsh ln01 \"echo out; echo err >&2; exit 3\"");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("ln01: out\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ln01: err\n"), std::string::npos) << r.out;
  // -t ends it on the node and names it in xCAT's words
  r = as_user(*d_, allowed_user, "xdsh ln01 -t 1 sleep 30");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Error:  ln01"), std::string::npos) << r.out;
  // xdsh's flags work through the daemon too: -z, -Q, -E; -o and -q need the direct path
  r = as_user(*d_, allowed_user, "xdsh ln01 -z 'exit 4'");
  EXPECT_EQ(r.out, "ln01: Remote_command_rc = 4\n");
  r = as_user(*d_, allowed_user, "xdsh ln01 -Q 'echo hidden'");
  EXPECT_EQ(r.out, "");
  r = as_user(*d_, allowed_user, "DSH_PATH=/opt/u:/usr/bin:/bin xdsh ln01 'echo $PATH'");
  EXPECT_EQ(r.out, "ln01: /opt/u:/usr/bin:/bin\n");
  r = as_user(*d_, allowed_user, "xdsh ln01 -o '-p 22' true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("xdsh -o, -q and -e are not available to users other than root"),
            std::string::npos)
    << r.out;
  // a node that does not exist: nothing runs
  r = as_user(*d_, allowed_user, "xdsh ln01,nosuch id");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Error: Invalid nodes and/or groups in noderange: nosuch"),
            std::string::npos)
    << r.out;
  // the audit log names the user and the local socket
  auto audit = cws::test::slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find(std::string{"\"client\":\"local\",\"user\":\""} + allowed_user),
            std::string::npos)
    << audit;
}

TEST_F(local_socket_test, a_user_policy_does_not_allow_gets_xcats_message) {
  for (std::string cmd : {"lsdef", "lsdef ln01", "nodels", "nodels ln01", "xdsh ln01 id"}) {
    auto r = as_user(*d_, denied_user, cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_EQ(r.out, "Error: Permission denied for request\n") << cmd;
  }
  // a policy row set by root counts at once
  run_tool(d_->home(), std::string{"mkdef -t policy -o 6.5 name="} + denied_user
                         + " rule=allow commands=nodels");
  auto r = as_user(*d_, denied_user, "nodels ln01");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "ln01\n");
  r = as_user(*d_, denied_user, "lsdef ln01");
  EXPECT_EQ(r.out, "Error: Permission denied for request\n");
  run_tool(d_->home(), "rmdef -t policy -o 6.5");
}

// Issue #27: the default `1.2 <hostname> trusted` row must not cover a local Unix account that
// happens to have the host's name (here the row is given the name of such an account).
TEST_F(local_socket_test, a_local_account_named_like_the_host_is_not_trusted) {
  auto rows = run_tool(d_->home(), "lsdef -t policy -i name,rule -c");
  ASSERT_NE(rows.out.find("1.2: rule=trusted"), std::string::npos) << rows.out;
  ASSERT_EQ(run_tool(d_->home(), std::string{"chdef -t policy 1.2 name="} + host_named_user).rc, 0);
  for (std::string cmd : {"lsdef", "nodels ln01", "xdsh ln01 id"}) {
    auto r = as_user(*d_, host_named_user, cmd);
    EXPECT_EQ(r.rc, 1) << cmd;
    EXPECT_EQ(r.out, "Error: Permission denied for request\n") << cmd;
  }
}

TEST_F(local_socket_test, the_other_tools_say_they_need_root) {
  for (std::string tool : {"mkdef ln99 groups=farm", "chdef ln01 os=x", "rmdef ln01",
                           "tabdump nodelist", "clusterctl tokens", "makenetworks"}) {
    auto r = as_user(*d_, allowed_user, tool);
    EXPECT_EQ(r.rc, 1) << tool;
    auto name = tool.substr(0, tool.find(' '));
    if (name == "clusterctl") {
      name = "tokens";
    }
    EXPECT_EQ(r.out.rfind("Error: " + name + " needs root: ", 0), 0u) << r.out;
  }
  // nothing was changed
  EXPECT_EQ(run_tool(d_->home(), "lsdef ln01 -i os -c").out, "ln01: os=rhels9\n");
}

TEST_F(local_socket_test, credentials_in_a_request_on_the_socket_are_refused) {
  auto path = announced_socket(*d_);
  auto r = run_tool(d_->home(), "curl -s --unix-socket " + path
                                  + " 'http://localhost/clusterws/nodes/ln01?userName=root"
                                    "&userPW=rootpw'");
  EXPECT_NE(r.out.find("The local socket identifies the caller by its Unix user"),
            std::string::npos)
    << r.out;
  r = run_tool(d_->home(),
               "curl -s -X POST --unix-socket " + path + " http://localhost/clusterws/tokens");
  EXPECT_NE(r.out.find("Tokens are not available on the local socket"), std::string::npos) << r.out;
  // root over the socket is root (the kernel says so): the same answer as over HTTPS
  r = run_tool(d_->home(), "curl -s -w ' %{http_code}' --unix-socket " + path
                             + " http://localhost/clusterws/nodes/ln01/attrs/os");
  EXPECT_EQ(r.out, "{\"ln01\":{\"os\":\"rhels9\"}}\n 200") << r.out;
}

// Its own daemon: stopped, crashed and restarted.
TEST(local_socket, removed_at_stop_replaced_when_stale_and_root_keeps_the_direct_path) {
  if (!cws::test::ensure_user(allowed_user)) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "pw"};
  run_tool(d.home(), "mkdef n1 groups=all");
  run_tool(d.home(),
           std::string{"mkdef -t policy -o 6 name="} + allowed_user + " rule=allow commands=lsdef");
  d.start();
  auto path = announced_socket(d);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(as_user(d, allowed_user, "lsdef").out, "n1  (node)\n");
  EXPECT_EQ(d.stop(), 0);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket outlived the daemon";
  // a stopped daemon: a clear message for the user, root's direct path as ever
  auto r = as_user(d, allowed_user, "lsdef");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("Error: clusterwsd is not running (nothing listens on " + path + ")"),
            std::string::npos)
    << r.out;
  r = run_tool(d.home(), "lsdef");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "n1  (node)\n");
  // a crash leaves the socket file: the next start replaces it
  make_stale_socket(path);
  d.start();
  EXPECT_NE(cws::test::slurp(d.log()).find("removed the stale local socket " + path),
            std::string::npos);
  EXPECT_EQ(as_user(d, allowed_user, "lsdef").out, "n1  (node)\n");
  EXPECT_EQ(d.stop(), 0);
  // a configured path that is not a socket is refused, and the daemon does not start
  std::filesystem::create_directories(dir.path / "run");
  std::filesystem::permissions(dir.path, std::filesystem::perms::owner_all
                                           | std::filesystem::perms::group_exec
                                           | std::filesystem::perms::others_exec);
  std::ofstream{dir.path / "run" / "file"} << "not a socket\n";
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "local_socket = " << (dir.path / "run" / "file").string() << "\n";
  r = run_tool(d.home(), "timeout 30 clusterwsd --listen 127.0.0.1:0 --home " + d.home().string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("exists and is not a socket"), std::string::npos) << r.out;
  EXPECT_EQ(cws::test::slurp(dir.path / "run" / "file"), "not a socket\n");
}

} // namespace
