// REST nodecopy, xdcp and xdsh -e against a real sshd on 127.0.0.1 (every node is this
// machine) with the daemon and the tools as processes: copy_root confinement, policy, a
// real non-root user, xCAT's answers, and every xdcp flag.

#include <gtest/gtest.h>

#include <fstream>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

namespace fs = std::filesystem;
using cws::test::run_tool;

constexpr const char* test_user = "cwstest";

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

class nodecopy_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    // the test user must reach its directories under it
    fs::permissions(dir_->path, fs::perms::others_exec, fs::perm_options::add);
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    {
      std::ofstream conf{home / "clusterws.conf", std::ios::app};
      conf << "ssh_connect_timeout = 10\n";
    }
    EXPECT_TRUE(fs::is_directory(home / "copy")); // clusterctl init makes copy_root
    farm_->authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
    user_ok_ = cws::test::ensure_user(test_user);
    if (user_ok_) {
      cws::test::make_key(home / "ssh" / test_user / "id_ed25519");
      farm_->authorize(test_user, home / "ssh" / test_user / "id_ed25519.pub");
      run_tool(home,
               std::string{"echo userpw | clusterctl passwd "} + test_user + " --password-stdin");
    }
    run_tool(home, "mkdef -t group farm sshport=" + std::to_string(farm_->port()));
    auto r = run_tool(home, "mkdef 'cn[01-40]' groups=farm,all ip=127.0.0.1");
    ASSERT_EQ(r.rc, 0) << r.out;
    run_tool(home, "mkdef deadrefused groups=dead ip=127.0.0.1 sshport="
                     + std::to_string(cws::test::free_port()));
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
    work_ = dir_->path / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(work_);
    fs::permissions(work_, fs::perms(0755));
  }

  static fs::path copy_root() {
    return d_->home() / "copy";
  }

  cws::test::reply copy(const std::string& nr, const std::string& body,
                        const std::string& extra = {}, const std::string& who = {}) {
    std::string url = who.empty() ? d_->url("/nodes/" + nr + "/nodecopy", extra)
                                  : "/clusterws/nodes/" + nr + "/nodecopy?" + who + extra;
    return client.request("POST", url, body);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static bool user_ok_;
  fs::path work_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* nodecopy_test::dir_ = nullptr;
cws::test::sshd* nodecopy_test::farm_ = nullptr;
cws::test::daemon* nodecopy_test::d_ = nullptr;
bool nodecopy_test::user_ok_ = false;

TEST_F(nodecopy_test, rest_copies_a_file_from_copy_root_to_every_node) {
  spit(copy_root() / "motd", "welcome\n");
  auto r = copy("cn[01-08]", R"({"src":[")" + (copy_root() / "motd").string() + R"("],"target":")"
                               + (work_ / "motd").string() + R"("})");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.body, "[]\n"); // xdcp prints nothing on success: infoout's empty array
  EXPECT_EQ(slurp(work_ / "motd"), "welcome\n");
  // a string src works too, and format=detail answers per node
  r = copy("cn01,cn02",
           R"({"src":")" + (copy_root() / "motd").string() + R"(","target":")" + work_.string()
             + R"("})",
           "&format=detail");
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_NE(r.body.find("\"cn01\":{\"rc\":0"), std::string::npos) << r.body;
  EXPECT_TRUE(fs::exists(work_ / "motd"));
  // the audit log names the copy
  EXPECT_NE(slurp(d_->home() / "audit.log").find("xdcp " + (copy_root() / "motd").string()),
            std::string::npos);
}

TEST_F(nodecopy_test, rest_refuses_sources_outside_copy_root_and_copies_nothing) {
  spit(work_ / "secret", "no");
  fs::create_symlink(work_ / "secret", copy_root() / "link-out");
  for (const auto& src :
       {std::string{"/etc/passwd"}, (copy_root() / ".." / "clusterws.conf").string(),
        (copy_root() / "link-out").string(), std::string{"relative/path"}}) {
    auto r
      = copy("cn01", R"({"src":[")" + src + R"("],"target":")" + (work_ / "x").string() + R"("})");
    EXPECT_EQ(r.status, 400u) << src << ": " << r.body;
    EXPECT_NE(r.body.find("is not inside " + fs::canonical(copy_root()).string()
                          + " (copy_root). Nothing was copied."),
              std::string::npos)
      << r.body;
    EXPECT_NE(r.body.find("\"errorcode\":\"2\""), std::string::npos) << r.body;
  }
  EXPECT_FALSE(fs::exists(work_ / "x"));
  auto r = copy("cn01", R"({"target":"/tmp/x"})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("Lack of operation data."), std::string::npos) << r.body;
  r = copy("cn01", R"({"src":[")" + (copy_root() / "nothing").string() + R"("],"target":"/tmp"})");
  EXPECT_EQ(r.status, 400u) << r.body;
  // unknown nodes: nothing runs (403, as nodeshell)
  r = copy("nosuchnode", R"({"src":["/etc/passwd"],"target":"/tmp/x"})");
  EXPECT_EQ(r.status, 403u) << r.body;
}

TEST_F(nodecopy_test, rest_failures_are_xcats_error_lines) {
  spit(copy_root() / "f", "x");
  auto body = R"({"src":[")" + (copy_root() / "f").string() + R"("],"target":")"
              + (work_ / "missing" / "f").string() + R"("})";
  auto r = copy("cn03,deadrefused", body);
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_NE(
    r.body.find("cn03: " + (work_ / "missing" / "f").string() + ": No such file or directory"),
    std::string::npos)
    << r.body;
  EXPECT_NE(r.body.find("deadrefused: ssh: connect to host deadrefused"), std::string::npos);
  EXPECT_NE(r.body.find("\"errorcode\":\"2\""), std::string::npos) << r.body;
  r = copy("cn03", body, "&format=detail");
  EXPECT_EQ(r.status, 201u);
  EXPECT_NE(r.body.find("\"error\":\"copy\""), std::string::npos) << r.body;
}

TEST_F(nodecopy_test, a_non_root_user_needs_an_xdcp_policy_row_and_copies_as_itself) {
  if (!user_ok_) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  const auto* pw = getpwnam(test_user);
  ASSERT_NE(pw, nullptr);
  auto mine = work_ / "mine";
  fs::create_directories(mine);
  ASSERT_EQ(::chown(mine.c_str(), pw->pw_uid, pw->pw_gid), 0);
  spit(copy_root() / "userfile", "from alice\n");
  std::string who = std::string{"userName="} + test_user + "&userPW=userpw";
  auto body = R"({"src":[")" + (copy_root() / "userfile").string() + R"("],"target":")"
              + mine.string() + R"("})";
  run_tool(d_->home(),
           std::string{"mkdef -t policy -o 6.1 name="} + test_user + " rule=allow commands=xdsh");
  auto r = copy("cn04", body, {}, who);
  EXPECT_EQ(r.status, 401u) << r.body; // xdsh is not xdcp
  run_tool(d_->home(), std::string{"chdef -t policy -o 6.1 commands=xdcp"});
  r = copy("cn04", body, {}, who);
  EXPECT_EQ(r.status, 201u) << r.body;
  struct stat st {};
  ASSERT_EQ(::stat((mine / "userfile").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, pw->pw_uid);
  // where Unix refuses the user: xCAT's rule makes "Permission denied" a 401
  r = copy("cn04",
           R"({"src":[")" + (copy_root() / "userfile").string() + R"("],"target":"/root/x"})", {},
           who);
  EXPECT_EQ(r.status, 401u) << r.body;
  EXPECT_FALSE(fs::exists("/root/x"));
  run_tool(d_->home(), "rmdef -t policy -o 6.1");
}

TEST_F(nodecopy_test, xdcp_copies_files_trees_with_modes_and_times_and_synclists) {
  spit(work_ / "src" / "a.conf", "A\n");
  spit(work_ / "src" / "tree" / "sub" / "b", "B\n");
  fs::permissions(work_ / "src" / "tree" / "sub" / "b", fs::perms(0750));
  fs::create_directories(work_ / "dst");
  auto home = d_->home();
  auto r = run_tool(home, "xdcp 'cn[01-20]' " + (work_ / "src" / "a.conf").string() + " "
                            + (work_ / "dst").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp(work_ / "dst" / "a.conf"), "A\n");
  // -R without which a directory is refused, -p keeps modes and times
  r = run_tool(home,
               "xdcp cn01 " + (work_ / "src" / "tree").string() + " " + (work_ / "dst").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("is a directory: -R copies directories."), std::string::npos) << r.out;
  r = run_tool(home, "touch -d '2001-02-03 04:05:06' " + (work_ / "src/tree/sub/b").string()
                       + "; xdcp 'cn[01-04]' -R -p " + (work_ / "src" / "tree").string() + " "
                       + (work_ / "dst").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  auto b = work_ / "dst" / "tree" / "sub" / "b";
  EXPECT_EQ(slurp(b), "B\n");
  EXPECT_EQ(fs::status(b).permissions(), fs::perms(0750));
  struct stat st {};
  ASSERT_EQ(::stat(b.c_str(), &st), 0);
  struct stat src {};
  ASSERT_EQ(::stat((work_ / "src/tree/sub/b").c_str(), &src), 0);
  EXPECT_EQ(st.st_mtime, src.st_mtime);
  // -F: a synclist of the common form
  spit(work_ / "synclist", "# files\n" + (work_ / "src" / "a.conf").string() + " -> "
                             + (work_ / "sync" / "renamed.conf").string() + "\n"
                             + (work_ / "src" / "a.conf").string() + " "
                             + (work_ / "src" / "tree" / "sub" / "b").string() + " -> "
                             + (work_ / "sync" / "dir").string() + "/\n");
  fs::create_directories(work_ / "sync");
  r = run_tool(home, "xdcp cn01,cn02 -F " + (work_ / "synclist").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(slurp(work_ / "sync" / "renamed.conf"), "A\n");
  EXPECT_EQ(slurp(work_ / "sync" / "dir" / "b"), "B\n");
  spit(work_ / "badlist", "EXECUTE:\n/tmp/x\n");
  r = run_tool(home, "xdcp cn01 -F " + (work_ / "badlist").string());
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("line 1: the EXECUTE: section is not supported"), std::string::npos)
    << r.out;
  // a synclist past the limit is refused before anything is read from it into entries
  spit(work_ / "hugelist", std::string(16 * 1024 * 1024 + 1, '#'));
  r = run_tool(home, "xdcp cn01 -F " + (work_ / "hugelist").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("is larger than 16 MiB."), std::string::npos) << r.out;
}

TEST_F(nodecopy_test, xdcp_pulls_one_file_per_node_and_counts_failed_nodes) {
  spit(work_ / "node.log", "log line\n");
  fs::create_directories(work_ / "pulled");
  auto home = d_->home();
  auto r = run_tool(home, "xdcp 'cn[05-07]' -P " + (work_ / "node.log").string() + " "
                            + (work_ / "pulled").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const auto* n : {"cn05", "cn06", "cn07"}) {
    EXPECT_EQ(slurp(work_ / "pulled" / (std::string{"node.log._"} + n)), "log line\n");
  }
  // failures: one line per failed node, the exit status is their number (DSHCLI)
  r = run_tool(home, "xdcp cn05,cn06,deadrefused " + (work_ / "node.log").string() + " "
                       + (work_ / "no" / "dir" / "f").string());
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(
    r.out.find("cn05: " + (work_ / "no" / "dir" / "f").string() + ": No such file or directory"),
    std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("deadrefused: ssh: connect to host deadrefused"), std::string::npos);
  r = run_tool(home, "xdcp cn05 -P " + (work_ / "node.log").string() + " /nonexistent/dir");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("must be an existing directory for -P"), std::string::npos) << r.out;
  r = run_tool(home, "xdcp cn05 onlyone");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("A source file and a target path are needed."), std::string::npos);
  EXPECT_EQ(run_tool(home, "xdcp -V").out.find("xdcp - clusterws Version"), 0u);
}

TEST_F(nodecopy_test, xdcp_r_p_pulls_each_nodes_tree_as_name_dot_underscore_node) {
  spit(work_ / "testlogdir" / "a.log", "a\n");
  spit(work_ / "testlogdir" / "sub" / "b.log", "b\n");
  fs::create_directories(work_ / "pulled");
  auto home = d_->home();
  auto r = run_tool(home, "xdcp 'cn[05-06]' -R -P " + (work_ / "testlogdir").string() + "/ "
                            + (work_ / "pulled").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const auto* n : {"cn05", "cn06"}) {
    auto tree = work_ / "pulled" / (std::string{"testlogdir._"} + n);
    EXPECT_EQ(slurp(tree / "a.log"), "a\n") << n;
    EXPECT_EQ(slurp(tree / "sub" / "b.log"), "b\n") << n;
  }
  // -RP as one word, a second run: the tree is replaced whole
  fs::remove(work_ / "testlogdir" / "a.log");
  r = run_tool(home, "xdcp cn05 -RP " + (work_ / "testlogdir").string() + " "
                       + (work_ / "pulled").string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(fs::exists(work_ / "pulled" / "testlogdir._cn05" / "a.log"));
  EXPECT_TRUE(fs::exists(work_ / "pulled" / "testlogdir._cn06" / "a.log"));
  // nothing to name the pull after
  r = run_tool(home, "xdcp cn05 -R -P / " + (work_ / "pulled").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("has no name to pull it as"), std::string::npos) << r.out;
  // a missing remote tree fails the node with scp's words
  r = run_tool(home,
               "xdcp cn05 -R -P " + (work_ / "gone").string() + " " + (work_ / "pulled").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("cn05: " + (work_ / "gone").string() + ": No such file or directory"),
            std::string::npos)
    << r.out;
}

TEST_F(nodecopy_test, xdsh_e_copies_a_script_over_the_connection_and_runs_it) {
  spit(work_ / "check.sh", "#!/bin/sh\necho \"ran with $1 $2\"\n");
  auto r = run_tool(d_->home(), "xdsh 'cn[10-12]' -e " + (work_ / "check.sh").string() + " x y");
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const auto* n : {"cn10", "cn11", "cn12"}) {
    EXPECT_NE(r.out.find(std::string{n} + ": ran with x y\n"), std::string::npos) << r.out;
  }
  // nothing is left in /tmp
  r = run_tool(d_->home(), "ls -a /tmp | grep -c '^\\.check\\.sh\\.cws-' || true");
  EXPECT_EQ(r.out, "0\n");
}

} // namespace
